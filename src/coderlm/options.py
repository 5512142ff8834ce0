"""Checking user-supplied option dicts against the dataclass that declares them."""

from __future__ import annotations

import dataclasses
from typing import Any


def check_options(cls: type, values: dict[str, Any], what: str) -> None:
    """Raise ValueError listing keys of ``values`` that are not fields of dataclass ``cls``."""
    if not isinstance(values, dict):
        raise ValueError(f"{what} options must be a dict, got {type(values).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown {what} option(s) {unknown}; known: {sorted(known)}")
