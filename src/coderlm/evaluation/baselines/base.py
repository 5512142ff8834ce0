"""The interface every baseline follows, and the helpers they share.

Scikit-learn conventions: ``__init__`` only stores its arguments, ``fit`` returns ``self``,
learned state ends in ``_``.

* ``check_fit_inputs`` / ``check_tasks`` / ``check_fitted``: input checks.
* ``log_scale`` / ``use_log_target`` (from ``coderlm.numbers.log_space``): whether an objective is
  regressed in (signed) log10 space (nonzero magnitudes spanning more than two decades; zeros and
  negatives allowed), then mapped back.
* ``text_lengths``: characters or whitespace-separated tokens per text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from coderlm.data.checks import check_targets, check_texts
from coderlm.numbers.log_space import from_fit_space, log_scale, to_fit_space, use_log_target  # noqa: F401 (shared)

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


def text_lengths(texts: Sequence[str], unit: str = "chars") -> np.ndarray:
    """Length of each text (float64): characters, or whitespace-separated tokens."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    if unit == "tokens":
        return np.array([len(t.split()) for t in texts], dtype=np.float64)
    return np.array([len(t) for t in texts], dtype=np.float64)
