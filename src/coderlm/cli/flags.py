"""Command-line flags made from where options are declared, and YAML configs holding the same names.

One source of truth: a dataclass field becomes ``--field-name`` with the comment written beside
the field as its help; a function or class parameter becomes ``--param-name`` with its line in
the docstring's ``Args:`` section as help. Defaults come from the declaration and are shown in
the help. A flag's value is None when not given, so a YAML config (same names, with
underscores, flat or under ``model:`` / ``training:`` sections) fills in what the command line
leaves out.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import io
import tokenize
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A bad config file or option value; the message names the file and key."""


def field_comments(cls: type) -> dict[str, str]:
    """The trailing ``# comment`` of each field declaration in a dataclass's source."""
    comments: dict[str, str] = {}
    lines = inspect.getsource(cls).splitlines()
    for token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
        if token.type != tokenize.COMMENT:
            continue
        code = lines[token.start[0] - 1][: token.start[1]].strip()
        name = code.split(":", 1)[0].strip()
        if ":" in code and name.isidentifier():
            comments[name] = token.string.lstrip("# ").strip()
    return comments


def docstring_args(obj: Callable | type) -> dict[str, str]:
    """``name: text`` entries of the ``Args:`` section of ``obj``'s docstring (continuation lines joined)."""
    doc = inspect.cleandoc(obj.__doc__ or "")
    found: dict[str, str] = {}
    inside, name = False, None
    for line in doc.splitlines():
        if line.strip() == "Args:":
            inside = True
            continue
        if not inside:
            continue
        if line and not line.startswith(" "):
            break  # the section ends at the next unindented line
        text = line.strip()
        head = text.split(":", 1)[0]
        if line.startswith("    ") and not line.startswith("     ") and ":" in text and head.isidentifier():
            name = head
            found[name] = text.split(":", 1)[1].strip()
        elif name is not None and text:
            found[name] += " " + text
    return found


@dataclasses.dataclass(frozen=True)
class Option:
    name: str  # the Python name (dest of the flag)
    default: Any
    help: str
    flag: str = ""  # the flag's name when it differs from the Python name
    kind: type = str  # the value's type when the default (None) does not tell it


NUMBER_TYPES = {"int": int, "float": float}  # annotations (strings) of fields whose default is None


def dataclass_options(cls: type, skip: Sequence[str] = ()) -> list[Option]:
    """Every field of ``cls`` with a default, documented by its comment."""
    helps = field_comments(cls)
    return [
        Option(f.name, f.default, helps.get(f.name, ""), kind=NUMBER_TYPES.get(str(f.type).split(" | ")[0], str))
        for f in dataclasses.fields(cls)
        if f.name not in skip and f.default is not dataclasses.MISSING
    ]


def signature_options(
    obj: Callable | type, skip: Sequence[str] = (), rename: dict[str, str] | None = None
) -> list[Option]:
    """Every parameter of ``obj`` (a function, or a class's ``__init__``) with a default, documented by
    its docstring's ``Args:`` entry; ``rename`` gives some a flag of another name."""
    helps = docstring_args(obj)
    parameters = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj).parameters
    return [
        Option(name, p.default, helps.get(name, ""), (rename or {}).get(name, ""))
        for name, p in parameters.items()
        if name not in ("self", *skip) and p.default is not inspect.Parameter.empty
    ]


def add_flags(parser: argparse.ArgumentParser, options: list[Option], title: str) -> list[str]:
    """Add ``--name`` for each option (value None when not given); return the flags' dests."""
    group = parser.add_argument_group(title)
    dests = []
    for option in options:
        dest = option.flag or option.name
        flag = "--" + dest.replace("_", "-")
        help_text = f"{option.help} (default: {option.default})".lstrip().replace("%", "%%")  # argparse formats it
        if isinstance(option.default, bool):
            group.add_argument(flag, dest=dest, action=argparse.BooleanOptionalAction, default=None, help=help_text)
        else:
            kind = type(option.default) if option.default is not None else option.kind
            group.add_argument(flag, dest=dest, type=kind, default=None, metavar=dest.upper(), help=help_text)
        dests.append(dest)
    return dests


def load_yaml_config(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping; errors name the file."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config must be a mapping of option names to values")
    return data


def merge_options(
    args: argparse.Namespace, config: dict[str, Any], sections: dict[str, list[str]], top_level: list[str], source: str
) -> dict[str, Any]:
    """Combine a YAML config and command-line flags into ``{"model": {...}, "training": {...}, top-level...}``.

    ``sections`` maps a section name to its field names; ``top_level`` lists the other
    allowed keys. A key in the wrong place or unknown raises ConfigError naming it.
    """
    merged: dict[str, Any] = {name: {} for name in sections}
    owner = {field: section for section, fields in sections.items() for field in fields}
    for key, value in config.items():
        if key in sections:
            if not isinstance(value, dict):
                raise ConfigError(f"{source}: '{key}' must be a mapping")
            for sub_key, sub_value in value.items():
                if sub_key not in sections[key]:
                    raise ConfigError(f"{source}: unknown option '{key}.{sub_key}'; known: {sorted(sections[key])}")
                merged[key][sub_key] = sub_value
        elif key in owner:
            merged[owner[key]][key] = value
        elif key in top_level:
            merged[key] = value
        else:
            known = sorted([*top_level, *sections, *owner])
            raise ConfigError(f"{source}: unknown option '{key}'; known: {known}")
    for key, value in vars(args).items():
        if value is None:
            continue
        if key in owner:
            merged[owner[key]][key] = value
        elif key in top_level:
            merged[key] = value
    return merged


def command_options(
    args: argparse.Namespace, sections: dict[str, list[str]], required: Sequence[str] = ()
) -> dict[str, Any]:
    """A command's options: its ``--config`` YAML merged under the flags given (``merge_options``; every
    other flag is top-level); each of ``required`` must be set in one of them, else ConfigError."""
    config = load_yaml_config(args.config) if args.config else {}
    fields = {name for names in sections.values() for name in names}
    top_level = [k for k in vars(args) if k not in ("config", "run", "flags", "command", "verbose", *fields)]
    opts = merge_options(args, config, sections, top_level, args.config or "command line")
    for name in required:
        if not opts.get(name):
            raise ConfigError(f"--{name} is required (on the command line or in --config)")
    return opts


def csv_list(value: str) -> list[str]:
    """``"a, b,c"`` -> ``["a", "b", "c"]`` (a flag's type)."""
    return [v.strip() for v in value.split(",") if v.strip()]


def int_list(value: str) -> list[int]:
    """``"8, 64"`` -> ``[8, 64]`` (a flag's type; argparse names the flag and the value if one is not an integer)."""
    try:
        return [int(v) for v in csv_list(value)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {value!r}") from None


def require_file(path: str | Path, flag: str) -> Path:
    """``path`` as a Path, or FileNotFoundError naming it and the flag."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: no such file ({flag})")
    return Path(path)
