"""Point estimates and uncertainty from samples shaped (n, S, k).

NaN samples (special tokens such as ``<NaN>`` or ``<Invalid>``) are left out of
every statistic, unless they are most of an input's samples: then the model says the
objective does not apply to that input (a kernel's peak memory, in a model trained on
Python programs and kernels with ``missing="auto"``), and every statistic is NaN.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import gaussian_kde

POINTS = ("median", "mean", "trimmed")


def _quiet(fn, *args, **kwargs) -> np.ndarray:
    with warnings.catch_warnings():  # all-NaN slices are expected and give NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def _mostly_nan(samples: np.ndarray) -> np.ndarray:
    """(n, S, k) -> (n, k): more than half of the input's samples of the objective are NaN."""
    return np.isnan(samples).mean(axis=1) > 0.5


def point_estimate(samples: np.ndarray, point: str = "median") -> np.ndarray:
    """(n, S, k) -> (n, k): the median (default), the mean, or the trimmed mean (``trimmed_mean``)."""
    if point not in POINTS:
        raise ValueError(f"point must be one of {POINTS}, got {point!r}")
    samples = np.asarray(samples, dtype=np.float64)
    if point == "trimmed":
        return trimmed_mean(samples)
    fn = np.nanmedian if point == "median" else np.nanmean
    return np.where(_mostly_nan(samples), np.nan, _quiet(fn, samples, axis=1))


def trimmed_mean(samples: np.ndarray, cut: float = 0.25) -> np.ndarray:
    """(n, S, k) -> (n, k): the mean of the samples left after dropping the lowest and the highest
    ``cut`` of each input's non-NaN samples (0.25: the interquartile mean). Robust to a few samples with
    a wrong exponent, as the median is, but not stuck on one spelled value: two inputs whose samples
    share a median still differ here when their samples do (ties broken by the rest of the distribution).
    """
    ordered = np.sort(np.asarray(samples, dtype=np.float64), axis=1)  # NaN last
    count = np.sum(~np.isnan(ordered), axis=1)  # (n, k)
    low = np.floor(cut * count).astype(np.int64)[:, None]  # (n, 1, k)
    rank = np.arange(ordered.shape[1])[None, :, None]
    kept = (rank >= low) & (rank < count[:, None] - low)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(kept, ordered, 0.0).sum(1) / kept.sum(1)
    return np.where(_mostly_nan(ordered), np.nan, mean)


def quantiles(samples: np.ndarray, q: float | np.ndarray) -> np.ndarray:
    """(n, S, k) -> (n, k) for scalar q, or (n, k, len(q)) for an array of levels in [0, 1]."""
    q_arr = np.asarray(q, dtype=np.float64)
    if np.any((q_arr < 0) | (q_arr > 1)):
        raise ValueError(f"quantile levels must be in [0, 1], got {q}")
    samples = np.asarray(samples, dtype=np.float64)
    out = np.where(_mostly_nan(samples), np.nan, _quiet(np.nanquantile, samples, q_arr, axis=1))  # ([len(q),] n, k)
    return out if q_arr.ndim == 0 else np.moveaxis(out, 0, -1)


def central_interval(samples: np.ndarray, level: float = 0.9) -> np.ndarray:
    """(n, S, k) -> (n, k, 2): lower and upper bounds holding ``level`` of the samples."""
    if not 0 < level < 1:
        raise ValueError(f"interval level must be in (0, 1), got {level}")
    return quantiles(samples, np.array([(1 - level) / 2, (1 + level) / 2]))


def density(samples: np.ndarray, grid: np.ndarray, log_scale: bool = False) -> np.ndarray:
    """Gaussian kernel density of one input's samples (S,) evaluated at ``grid``.

    With ``log_scale`` the density is estimated over log10 of positive samples
    (for targets spanning decades) and returned per unit of the original value.
    """
    values = np.asarray(samples, dtype=np.float64)
    values = values[np.isfinite(values)]
    grid = np.asarray(grid, dtype=np.float64)
    if log_scale:
        values = np.log10(values[values > 0])
    if values.size < 2 or np.ptp(values) == 0:
        raise ValueError("density needs at least two distinct finite samples")
    kde = gaussian_kde(values)
    if not log_scale:
        return kde(grid)
    out = np.zeros_like(grid)
    positive = grid > 0
    out[positive] = kde(np.log10(grid[positive])) / (grid[positive] * np.log(10))
    return out
