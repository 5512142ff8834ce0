"""The space a value is regressed in: as it is, or a signed log10 where an objective spans decades.

Shared by the baselines (trees, kNN, text length, the regression head) and the RLM's auxiliary
regression (training option ``aux_regression``), so both fit an objective in the same space.
"""

from __future__ import annotations

import numpy as np

LOG_SPAN_DECADES = 2.0  # objectives spanning more than this many decades are regressed in log10 space


def log_scale(values: np.ndarray) -> float:
    """How an objective is regressed: 0.0, as it is; ``c`` > 0, as ``sign(v) * log10(1 + |v| / c)`` (a signed
    log: zeros and negative values allowed, e.g. allocated bytes of 0 or a shrunk heap). Log when the nonzero
    (present) magnitudes span more than ``LOG_SPAN_DECADES`` decades; ``c`` is a tenth of the smallest of them,
    so for positive values this is ``log10(v)`` shifted (bent by at most 0.04 at the smallest)."""
    magnitudes = np.abs(values[~np.isnan(values)])
    magnitudes = magnitudes[magnitudes > 0]
    if magnitudes.size == 0 or np.log10(magnitudes.max() / magnitudes.min()) <= LOG_SPAN_DECADES:
        return 0.0
    return float(magnitudes.min() / 10)


def use_log_target(values: np.ndarray) -> bool:
    """True when ``log_scale`` regresses the values in (signed) log space."""
    return log_scale(values) > 0


def to_fit_space(values: np.ndarray, scale: float) -> np.ndarray:
    """The regression target: the signed log of ``values`` at ``scale`` (``log_scale``), or the values (0)."""
    return np.sign(values) * np.log10(1 + np.abs(values) / scale) if scale > 0 else values


def from_fit_space(values: np.ndarray, scale: float) -> np.ndarray:
    """Back from the regression target (inverse of ``to_fit_space``)."""
    if scale <= 0:
        return values
    with np.errstate(over="ignore"):
        return np.sign(values) * scale * (np.power(10.0, np.abs(values)) - 1)
