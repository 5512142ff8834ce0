"""Text length as the only feature.

``TextLength`` fits, per objective, a least-squares line of the target on
``log(1 + length)``. It shows how much of a ranking text size alone explains:
a model that does not beat it has learned little beyond "bigger costs more".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from coderlm.data.checks import check_texts
from coderlm.evaluation.baselines.base import (
    check_fit_inputs,
    check_fitted,
    check_tasks,
    from_fit_space,
    log_scale,
    text_lengths,
    to_fit_space,
)


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
            log.append(log_scale(values[rows, j]))
            y = to_fit_space(values[rows, j], log[-1])
            coef.append(np.linalg.lstsq(design[rows], y, rcond=None)[0])
        self.coef_ = np.array(coef)  # (k, 2): intercept, slope
        self.log_target_ = np.array(log)  # (k,) log_scale per objective: 0 = linear
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
            out[:, j] = from_fit_space(fit_space[:, j], float(log))
        return out.astype(np.float64)
