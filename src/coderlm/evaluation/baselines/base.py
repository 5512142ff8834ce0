"""The interface every baseline follows, and the helpers they share.

Scikit-learn conventions: ``__init__`` only stores its arguments, ``fit`` returns ``self``,
learned state ends in ``_``.

* ``check_fit_inputs`` / ``check_tasks`` / ``check_fitted``: input checks.
* ``use_log_target``: whether an objective is regressed in log10 space (all
  present values > 0 and spanning more than two decades), then exponentiated back.
* ``text_lengths``: characters or whitespace-separated tokens per text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from coderlm.data.checks import check_targets, check_texts

LOG_SPAN_DECADES = 2.0  # objectives spanning more than this many decades are regressed in log10 space
UNITS = ("chars", "tokens")


class Baseline(Protocol):
    """What every baseline offers: fit on texts and (n, k) targets, predict (n, k) float64."""

    def fit(self, texts: Sequence[str], targets, tasks: Sequence[str] | None = None) -> Baseline: ...

    def predict(self, texts: Sequence[str], tasks: Sequence[str] | None = None) -> np.ndarray: ...


def check_tasks(tasks: Sequence[str] | None, n: int) -> list[str] | None:
    """``None``, or a list of ``n`` task labels (ValueError otherwise)."""
    if tasks is None:
        return None
    if isinstance(tasks, str):
        raise ValueError("tasks must be a sequence of labels, one per text, not one string")
    tasks = [str(t) for t in tasks]
    if len(tasks) != n:
        raise ValueError(f"got {len(tasks)} task labels for {n} texts")
    return tasks


def check_fit_inputs(
    texts: Sequence[str], targets, tasks: Sequence[str] | None = None
) -> tuple[list[str], np.ndarray, list[str] | None]:
    """Texts, float64 targets (n, k) with NaN for missing objectives, and task labels.

    Raises ValueError for bad inputs and for an objective with no value in any row.
    """
    texts = check_texts(texts)
    values = check_targets(targets, len(texts), None, (), allow_nan=True)
    empty = [j for j in range(values.shape[1]) if np.isnan(values[:, j]).all()]
    if empty:
        raise ValueError(f"objective(s) {empty} have no value in any row")
    return texts, values, check_tasks(tasks, len(texts))


def check_fitted(estimator: object, attribute: str) -> None:
    """RuntimeError unless ``estimator`` has the learned ``attribute``."""
    if not hasattr(estimator, attribute):
        raise RuntimeError(f"this {type(estimator).__name__} is not fitted yet: call fit() first")


def use_log_target(values: np.ndarray) -> bool:
    """True when all (present) values are > 0 and span more than ``LOG_SPAN_DECADES`` decades."""
    values = values[~np.isnan(values)]
    if values.size == 0 or values.min() <= 0:
        return False
    return bool(np.log10(values.max() / values.min()) > LOG_SPAN_DECADES)


def to_fit_space(values: np.ndarray, log: bool) -> np.ndarray:
    """The regression target: ``log10(values)`` when ``log``, else the values."""
    return np.log10(values) if log else values


def from_fit_space(values: np.ndarray, log: bool) -> np.ndarray:
    """Back from the regression target: ``10 ** values`` when ``log``."""
    if not log:
        return values
    with np.errstate(over="ignore"):
        return np.power(10.0, values)


def text_lengths(texts: Sequence[str], unit: str = "chars") -> np.ndarray:
    """Length of each text (float64): characters, or whitespace-separated tokens."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    if unit == "tokens":
        return np.array([len(t.split()) for t in texts], dtype=np.float64)
    return np.array([len(t) for t in texts], dtype=np.float64)
