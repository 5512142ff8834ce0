"""The dataset schema: one ``Example`` per row, a ``Dataset`` of them, and its arrays for training.

A row (a JSONL line, or a Parquet row) is a JSON object with these fields:

===========  ==========================  ====================================================
field        type                        meaning
===========  ==========================  ====================================================
``text``     non-empty string, required  the input: a program, a kernel, an ONNX graph as text
``targets``  object, required            ``{objective name: number or null}``; null or NaN = missing
``task``     string, optional            e.g. ``"latency/a100"``
``group``    string, optional            rows sharing a group stay in one split (a problem id)
``meta``     object, optional            anything JSON, carried along untouched
===========  ==========================  ====================================================

Null ``task``, ``group`` or ``meta`` means absent. ``targets`` may be empty (inputs to predict on).
Errors are ``DatasetError`` with one line ``FILE:LINE: field 'x': message``.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from coderlm.data.checks import resolve_auto_missing

FIELDS = ("text", "targets", "task", "group", "meta")
# What a missing target (absent, null or NaN) means, in datasets, in fit and on the command line:
# "special" where the row's task never has the objective, else "skip" (data.checks.resolve_auto_missing) /
# an error / drop the row / keep it, out of the loss / learn it as the <NaN> token.
MISSING_POLICIES = ("auto", "error", "skip", "mask", "special")


class DatasetError(ValueError):
    """A bad dataset file, row or request; ``str`` is one line ``FILE:LINE: field 'x': message``.

    ``line`` (1-based JSONL line, or 1-based Parquet row) and ``field`` are None where they do not apply,
    and their parts are then left out (``FILE: message``). In-memory datasets show ``<memory>`` as FILE.
    """

    def __init__(self, path: str | Path | None, message: str, line: int | None = None, field: str | None = None):
        self.path = "<memory>" if path is None else str(path)
        self.message = " ".join(str(message).split())
        self.line = line
        self.field = field
        where = self.path if line is None else f"{self.path}:{line}"
        what = "" if field is None else f"field '{field}': "
        super().__init__(f"{where}: {what}{self.message}")

    def __reduce__(self):
        return (type(self), (self.path, self.message, self.line, self.field))


@dataclasses.dataclass(frozen=True)
class Example:
    """One row: an input text, its targets by objective name (missing = absent or NaN), and optional labels."""

    text: str
    targets: dict[str, float]
    task: str | None = None
    group: str | None = None
    meta: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text:
            raise ValueError(f"Example.text must be a non-empty string, got {self.text!r:.60}")
        if not isinstance(self.targets, dict):
            raise ValueError(f"Example.targets must be a dict of name -> float, got {type(self.targets).__name__}")
        targets = {}
        for name, value in self.targets.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"Example.targets has name {name!r}; names must be non-empty strings")
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
                raise ValueError(f"Example.targets[{name!r}] is {type(value).__name__}, expected a float or None")
            targets[name] = math.nan if value is None else float(value)
        object.__setattr__(self, "targets", targets)
        for name in ("task", "group"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"Example.{name} must be a string or None, got {type(value).__name__}")
        if not isinstance(self.meta, dict):
            raise ValueError(f"Example.meta must be a dict, got {type(self.meta).__name__}")
        object.__setattr__(self, "meta", dict(self.meta))

    def to_row(self) -> dict[str, Any]:
        """The JSON object for this example: NaN targets become null; absent task, group and empty meta are omitted."""
        row: dict[str, Any] = {
            "text": self.text,
            "targets": {k: None if math.isnan(v) else v for k, v in self.targets.items()},
        }
        if self.task is not None:
            row["task"] = self.task
        if self.group is not None:
            row["group"] = self.group
        if self.meta:
            row["meta"] = self.meta
        return row


def example_from_row(row: object, path: str | Path | None = None, line: int | None = None) -> Example:
    """Validate one decoded row (a JSON value) into an Example, or raise a DatasetError at ``path:line``."""

    def fail(message: str, field: str | None = None) -> DatasetError:
        return DatasetError(path, message, line, field)

    if not isinstance(row, dict):
        raise fail(f"row is {_json_type(row)}, expected a JSON object")
    for key in row:
        if key not in FIELDS:
            raise fail(f"unknown field; allowed fields are {', '.join(FIELDS)}", str(key))
    text = row.get("text")
    if "text" not in row:
        raise fail("missing (required)", "text")
    if not isinstance(text, str):
        raise fail(f"expected a non-empty string, got {_json_type(text)}", "text")
    if not text:
        raise fail("expected a non-empty string, got an empty string", "text")
    if "targets" not in row:
        raise fail("missing (required)", "targets")
    raw_targets = row["targets"]
    if not isinstance(raw_targets, dict):
        raise fail(f"expected an object of name: number or null, got {_json_type(raw_targets)}", "targets")
    targets = {}
    for name, value in raw_targets.items():
        if not isinstance(name, str) or not name:
            raise fail(f"objective names must be non-empty strings, got {name!r}", "targets")
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
            raise fail(f"expected a number or null, got {_json_type(value)}", f"targets.{name}")
        try:
            targets[name] = math.nan if value is None else float(value)
        except OverflowError:
            raise fail(f"{value} is too large for a float64", f"targets.{name}") from None
    labels = {}
    for name in ("task", "group"):
        value = row.get(name)
        if value is not None and not isinstance(value, str):
            raise fail(f"expected a string, got {_json_type(value)}", name)
        labels[name] = value
    meta = row.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise fail(f"expected an object, got {_json_type(meta)}", "meta")
    return Example(text, targets, labels["task"], labels["group"], meta or {})


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, numbers.Number):
        return f"a number ({value!r})"
    names = {str: "a string", dict: "an object", list: "an array", tuple: "an array"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return type(value).__name__


@dataclasses.dataclass(frozen=True)
class DatasetArrays:
    """A dataset as arrays for training: row i of every field is ``dataset[rows[i]]``.

    ``targets`` is float64 (n, k) in ``objectives`` order, NaN where missing (never under ``missing="skip"``).
    ``tasks`` and ``groups`` hold ``""`` where absent; ``skipped`` counts rows dropped by ``missing="skip"``
    (or ``"auto"``). ``missing`` is the policy applied: ``"auto"`` resolved to ``"special"`` or ``"skip"``.
    """

    texts: list[str]
    targets: np.ndarray
    tasks: list[str]
    groups: list[str]
    rows: np.ndarray
    skipped: int
    objectives: list[str]
    missing: str

    def __len__(self) -> int:
        return len(self.texts)


@dataclasses.dataclass(frozen=True)
class Dataset:
    """A list of examples plus the file they came from (``source``; None when built in memory)."""

    examples: list[Example]
    source: Path | None = None

    def __post_init__(self) -> None:
        examples = list(self.examples)
        for i, example in enumerate(examples):
            if not isinstance(example, Example):
                raise DatasetError(self.source, f"examples[{i}] is {type(example).__name__}, expected Example")
        object.__setattr__(self, "examples", examples)
        object.__setattr__(self, "source", None if self.source is None else Path(self.source))

    def __len__(self) -> int:
        return len(self.examples)

    def __iter__(self) -> Iterator[Example]:
        return iter(self.examples)

    def __getitem__(self, index: int | slice | Sequence[int] | np.ndarray) -> Example | Dataset:
        """An Example for an int; a Dataset for a slice or a sequence of indices."""
        if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
            return self.examples[index]
        if isinstance(index, slice):
            return Dataset(self.examples[index], self.source)
        return self.subset(index)

    def subset(self, indices: Sequence[int] | np.ndarray) -> Dataset:
        """The examples at ``indices`` (in that order, repeats allowed), from the same source."""
        picked = []
        for i in np.asarray(indices).reshape(-1).tolist() if isinstance(indices, np.ndarray) else list(indices):
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
                raise DatasetError(self.source, f"subset index {i!r} is {type(i).__name__}, expected an int")
            if not -len(self) <= i < len(self):
                raise DatasetError(self.source, f"subset index {i} is out of range for {len(self)} examples")
            picked.append(self.examples[i])
        return Dataset(picked, self.source)

    def target_names(self) -> list[str]:
        """Every objective name in any row, sorted."""
        return sorted({name for example in self.examples for name in example.targets})

    def tasks(self) -> list[str]:
        """The distinct tasks (absent ones left out), sorted."""
        return sorted({e.task for e in self.examples if e.task is not None})

    def groups(self) -> list[str]:
        """The distinct groups (absent ones left out), sorted."""
        return sorted({e.group for e in self.examples if e.group is not None})

    def to_arrays(
        self, objectives: Sequence[str] | None = None, missing: str = "skip", absent: str = "error"
    ) -> DatasetArrays:
        """Texts, targets (n, k) in ``objectives`` order (default: all names sorted), tasks, groups, kept rows.

        ``missing`` decides rows where a chosen objective is absent or NaN: ``"error"`` raises a DatasetError
        naming the first such row; ``"skip"`` drops them (counted in ``skipped``); ``"mask"`` keeps NaN for the
        trainer to mask out of the loss; ``"special"`` keeps NaN to be learned as a ``<NaN>`` token; ``"auto"``
        keeps NaN where the row's task has the objective in no row (``"special"``: it does not apply to that
        task) and skips rows missing any other value (``coderlm.data.checks.resolve_auto_missing``). An objective
        in no row raises a DatasetError listing the known names; with ``absent="nan"`` it is a column of NaN
        (a model's context objectives, which held-out data need not have), as long as one objective is present.
        """
        if missing not in MISSING_POLICIES:
            raise DatasetError(self.source, f"missing={missing!r} is unknown; expected one of {MISSING_POLICIES}")
        known = self.target_names()
        if absent == "nan" and objectives is not None and any(name in known for name in objectives):
            known = sorted(set(known) | set(objectives))
        names = known if objectives is None else self._check_objectives(objectives, known)
        targets = np.full((len(self), len(names)), np.nan, dtype=np.float64)
        for i, example in enumerate(self.examples):
            for j, name in enumerate(names):
                targets[i, j] = example.targets.get(name, math.nan)
        if missing == "error" and np.isnan(targets).any():
            i, j = np.argwhere(np.isnan(targets))[0]
            choices = "missing='auto', 'skip', 'mask' or 'special'"
            message = f"example {i + 1} misses it (null, NaN or absent); choose {choices}"
            raise DatasetError(self.source, message, field=f"targets.{names[j]}")
        if missing == "auto":
            keep, missing = resolve_auto_missing(targets, [e.task for e in self.examples])
        else:
            keep = ~np.isnan(targets).any(axis=1) if missing == "skip" else np.ones(len(self), dtype=bool)
        rows = np.flatnonzero(keep)
        kept = [self.examples[i] for i in rows]
        return DatasetArrays(
            texts=[e.text for e in kept],
            targets=targets[rows],
            tasks=[e.task or "" for e in kept],
            groups=[e.group or "" for e in kept],
            rows=rows,
            skipped=len(self) - len(rows),
            objectives=list(names),
            missing=missing,
        )

    def _check_objectives(self, objectives: Sequence[str], known: list[str]) -> list[str]:
        if isinstance(objectives, str):
            raise DatasetError(self.source, f"objectives must be a list of names, not one string ([{objectives!r}])")
        names = list(objectives)
        if not names:
            raise DatasetError(self.source, "objectives is empty; pass None for all objectives")
        for name in names:
            if name not in known:
                listed = ", ".join(known) if known else "none"
                raise DatasetError(self.source, f"unknown objective {name!r}; known objectives: {listed}")
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise DatasetError(self.source, f"objectives repeat {', '.join(map(repr, duplicates))}")
        return names
