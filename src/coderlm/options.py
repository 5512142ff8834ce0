"""Options: checking user-supplied option dicts, and errors that name the option.

Library code names its parameters (``count``, ``workers``), never command-line flags: an
``OptionError`` carries the parameter's name, and the command line shows it as its flag
(``--count``).
"""

from __future__ import annotations

import dataclasses
from typing import Any


class OptionError(ValueError):
    """A bad value for one named option; ``str`` is ``"[<kind> ]<option> <message>"``.

    >>> OptionError("count", "must be >= 1, got 0")
    OptionError('count must be >= 1, got 0')
    >>> str(OptionError("steps", "must be a positive integer, got 0", kind="training option"))
    'training option steps must be a positive integer, got 0'
    """

    def __init__(self, option: str, message: str, kind: str = "") -> None:
        self.option, self.message, self.kind = option, message, kind
        super().__init__(f"{kind} {option} {message}".lstrip())

    def __reduce__(self):
        return (type(self), (self.option, self.message, self.kind))


def check_integers(obj: Any, names: tuple[str, ...], kind: str, minimum: int = 1) -> None:
    """Each of ``obj``'s fields ``names`` must be an integer (not a bool) >= ``minimum`` (1 or 0), else
    OptionError naming it."""
    what = "a positive integer" if minimum == 1 else "a non-negative integer"
    for name in names:
        value = getattr(obj, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise OptionError(name, f"must be {what}, got {value!r}", kind)


def check_options(cls: type, values: dict[str, Any], what: str) -> None:
    """Raise ValueError listing keys of ``values`` that are not fields of dataclass ``cls``."""
    if not isinstance(values, dict):
        raise ValueError(f"{what} options must be a dict, got {type(values).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown {what} option(s) {unknown}; known: {sorted(known)}")
