"""A one-line summary of the test inputs a program is measured on, for texts that state them.

A program's memory and runtime on its tests depend on how large the tests' inputs are, and that is not in
the statement or the code: ``maxProfit`` on 8 prices and on 100,000 are the same text. ``describe`` writes
the size of each argument at its largest over the cases (a list's length, with the longest inner list for
nested ones; a string's length; an integer's largest magnitude) and the number of cases:

    # inputs: 17 cases; largest: list[7], list[4]; 212 values in all

(the comment sign is the language's). Sizes are exact numbers, read digit by digit by the tokenizer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

COMMENT = {"python": "#"}  # every other harness language comments with //


def describe(cases: Sequence[Sequence[Any]], language: str = "python") -> str:
    """The summary line of ``cases`` (per case, its arguments as JSON values)."""
    sign = COMMENT.get(language, "//")
    if not cases:
        return f"{sign} inputs: no cases"
    width = max(len(case) for case in cases)
    largest = [_largest([case[i] for case in cases if i < len(case)]) for i in range(width)]
    values = sum(_count(argument) for case in cases for argument in case)
    plural = "case" if len(cases) == 1 else "cases"
    return f"{sign} inputs: {len(cases)} {plural}; largest: {', '.join(largest) or 'none'}; {values} values in all"


def _largest(values: list[Any]) -> str:
    """The size of the largest of one argument's values, as ``list[7]``, ``list[3][12]``, ``str[40]``, ``int 5000``."""
    present = [v for v in values if v is not None]
    if not present:
        return "null"
    kind = _size(max(present, key=_count))[0]  # mixed kinds: the kind of the largest value
    sizes = [dims for found, dims in map(_size, present) if found == kind]
    if kind in ("int", "float"):
        return f"{kind} {max(dims[0] for dims in sizes)}"
    depth = max(len(dims) for dims in sizes)
    return kind + "".join(f"[{max(dims[d] if d < len(dims) else 0 for dims in sizes)}]" for d in range(depth))


def _size(value: Any) -> tuple[str, list[int]]:
    """(kind, dims): a list's length and its longest inner list's, a string's length, a number's magnitude."""
    if isinstance(value, bool):
        return "bool", []
    if value is None:
        return "null", []
    if isinstance(value, int):
        return "int", [abs(value)]
    if isinstance(value, float):
        return "float", [round(abs(value))]
    if isinstance(value, str):
        return "str", [len(value)]
    if isinstance(value, list):
        inner = [_size(v)[1] for v in value if isinstance(v, list | str)]
        deeper = [max((d[k] for d in inner if k < len(d)), default=0) for k in range(max(map(len, inner), default=0))]
        return "list", [len(value), *deeper]
    return type(value).__name__, []


def _count(value: Any) -> int:
    """Scalars in a JSON value (a string counts its characters)."""
    if isinstance(value, list):
        return sum(_count(v) for v in value)
    if isinstance(value, str):
        return len(value)
    return 1
