"""Text length as the only feature, and the helpers every baseline shares.

``TextLength`` fits, per objective, a least-squares line of the target on
``log(1 + length)``. It shows how much of a ranking text size alone explains:
a model that does not beat it has learned little beyond "bigger costs more".

Shared by all baselines (scikit-learn conventions: ``__init__`` only stores its
arguments, ``fit`` returns ``self``, learned state ends in ``_``):

* ``check_fit_inputs`` / ``check_tasks`` / ``check_fitted``: input checks.
* ``use_log_target``: whether an objective is regressed in log10 space (all
  present values > 0 and spanning more than two decades), then exponentiated back.
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


class TextLength:
    """Per objective: ``target ~ a + b * log(1 + length)`` by least squares.

    Args:
        unit: ``"chars"`` (default) or ``"tokens"`` (whitespace-separated).
    """

    def __init__(self, unit: str = "chars") -> None:
        self.unit = unit

    def fit(self, texts: Sequence[str], targets, tasks: Sequence[str] | None = None) -> TextLength:
        """Fit one line per objective on the rows where that objective is present."""
        texts, values, _ = check_fit_inputs(texts, targets, tasks)
        x = np.log1p(text_lengths(texts, self.unit))
        design = np.stack([np.ones_like(x), x], axis=1)
        coef, log = [], []
        for j in range(values.shape[1]):
            rows = ~np.isnan(values[:, j])
            log.append(use_log_target(values[rows, j]))
            y = to_fit_space(values[rows, j], log[-1])
            coef.append(np.linalg.lstsq(design[rows], y, rcond=None)[0])
        self.coef_ = np.array(coef)  # (k, 2): intercept, slope
        self.log_target_ = np.array(log)  # (k,) bool
        return self

    def predict(self, texts: Sequence[str], tasks: Sequence[str] | None = None) -> np.ndarray:
        """Predictions (n, k) float64."""
        check_fitted(self, "coef_")
        texts = check_texts(texts)
        check_tasks(tasks, len(texts))
        x = np.log1p(text_lengths(texts, self.unit))
        fit_space = self.coef_[:, 0][None, :] + x[:, None] * self.coef_[:, 1][None, :]
        out = np.empty_like(fit_space)
        for j, log in enumerate(self.log_target_):
            out[:, j] = from_fit_space(fit_space[:, j], bool(log))
        return out.astype(np.float64)
