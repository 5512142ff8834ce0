"""Checks of in-memory inputs and targets, with errors that name the bad row."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np


def check_texts(texts: Sequence[str]) -> list[str]:
    """A list of non-empty strings, or ValueError naming the first bad index."""
    if isinstance(texts, str):
        raise ValueError("texts must be a sequence of strings, not one string (wrap it in a list)")
    try:
        texts = list(texts)
    except TypeError as exc:
        raise ValueError(f"texts must be a sequence of strings, got {type(texts).__name__}") from exc
    if not texts:
        raise ValueError("texts is empty")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(f"texts[{i}] is {type(text).__name__}, expected str")
        if not text:
            raise ValueError(f"texts[{i}] is an empty string")
    return texts


def check_targets(
    targets, n: int, num_objectives: int | None, specials: Sequence[str], allow_nan: bool = False
) -> np.ndarray:
    """Targets as float64 (n, k): a list of floats (k = 1) or of equal-length lists.

    Non-finite values are allowed only where ``specials`` has a token for them, and
    NaN (a missing value) also when ``allow_nan``. ValueError names the first bad
    row (and objective).
    """
    if isinstance(targets, np.ndarray):
        rows = list(targets) if targets.ndim > 1 else targets.tolist()
    else:
        try:
            rows = list(targets)
        except TypeError as exc:
            raise ValueError(f"targets must be a sequence, got {type(targets).__name__}") from exc
    if len(rows) != n:
        raise ValueError(f"got {n} texts but {len(rows)} targets")
    first = _as_row(rows[0], 0) if rows else []
    k = num_objectives if num_objectives is not None else len(first)
    out = np.empty((n, k), dtype=np.float64)
    for i, row in enumerate(rows):
        values = _as_row(row, i)
        if len(values) != k:
            raise ValueError(f"targets[{i}] has {len(values)} objective(s), expected {k}")
        for j, value in enumerate(values):
            if not math.isfinite(value) and not (allow_nan and math.isnan(value)):
                name = "nan" if math.isnan(value) else ("+inf" if value > 0 else "-inf")
                if name == "nan" and name not in specials:
                    raise ValueError(
                        f"targets[{i}][{j}] is missing (None or NaN); pass missing='mask' to leave it out "
                        "of the loss, or specials=('nan',) to learn NaN as a value"
                    )
                if name not in specials:
                    raise ValueError(f"targets[{i}][{j}] is {value!r}; pass specials=({name!r},) to learn such values")
            out[i, j] = value
    return out


def _as_row(row, i: int) -> list[float]:
    values = row.tolist() if isinstance(row, np.ndarray) else row
    if isinstance(values, numbers.Real) and not isinstance(values, bool):
        return [float(values)]
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ValueError(f"targets[{i}] is {type(row).__name__}, expected a number or a list of numbers")
    out = []
    for j, value in enumerate(values):
        if value is None:
            value = math.nan
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"targets[{i}][{j}] is {type(value).__name__}, expected a number")
        out.append(float(value))
    if not out:
        raise ValueError(f"targets[{i}] is empty")
    return out


def resolve_auto_missing(values: np.ndarray, tasks: Sequence[str] | None) -> tuple[np.ndarray, str]:
    """``missing="auto"``: which rows to keep, and the policy for what stays missing in them.

    A value missing where the row's task has that objective in no row means the objective does not apply
    to the task (a multi-task dataset: kernels have no peak memory): it is kept and learned as the ``<NaN>``
    token (``"special"``; measured best, docs/results.md "Why Python memory loses beside kernels"). A value
    missing where its task has the objective elsewhere is a failed measurement: the row is skipped. Rows
    without task labels are one task. Returns (rows kept, ``"special"`` if any such NaN stays, else ``"skip"``).
    """
    missing = np.isnan(values)
    labels = np.asarray(["" if t is None else str(t) for t in tasks] if tasks is not None else [""] * len(values))
    absent = np.zeros_like(missing)
    for task in np.unique(labels):
        in_task = labels == task
        absent[in_task] = missing[in_task].all(axis=0)  # the task never has these objectives
    keep = ~(missing & ~absent).any(axis=1)
    return keep, "special" if absent[keep].any() else "skip"
