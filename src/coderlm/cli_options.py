"""Command-line flags made from the option dataclasses, and YAML configs holding the same fields.

Each dataclass field becomes ``--field-name`` with the comment written beside the
field as its help, so flags and their documentation never drift apart. A YAML
config uses the same names (underscores), flat or under ``model:`` /
``training:`` sections; flags given on the command line win over the file.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import io
import tokenize
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


def add_dataclass_flags(
    parser: argparse.ArgumentParser, cls: type, skip: set[str] = frozenset(), title: str | None = None
) -> list[str]:
    """Add ``--name`` for each field of ``cls`` (default None: "not given"); return the field names."""
    group = parser.add_argument_group(title or f"{cls.__name__} options")
    helps = field_comments(cls)
    names = []
    for field in dataclasses.fields(cls):
        if field.name in skip or field.default is dataclasses.MISSING:
            continue
        flag = "--" + field.name.replace("_", "-")
        kind = type(field.default)
        help_text = f"{helps.get(field.name, '')} (default: {field.default})"
        if kind is bool:
            group.add_argument(
                flag, dest=field.name, action=argparse.BooleanOptionalAction, default=None, help=help_text
            )
        else:
            group.add_argument(
                flag, dest=field.name, type=kind, default=None, metavar=field.name.upper(), help=help_text
            )
        names.append(field.name)
    return names


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
