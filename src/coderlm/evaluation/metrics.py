"""Accuracy, ranking and selection metrics for predicted versus measured values.

Every function takes 1-D sequences of equal length and first drops the rows where
any value is NaN or infinite. Statistics that are undefined (too few rows, constant
inputs) come back as NaN, silently: no warnings are printed.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from scipy import stats

NAN = float("nan")


def _finite(names: Sequence[str], *arrays, groups: Sequence | None = None) -> tuple[np.ndarray, ...]:
    """Checks that the arrays are 1-D and equally long; returns them without non-finite rows.

    With ``groups`` the group labels (as strings) of the kept rows come last.
    """
    out = [np.asarray(a, dtype=np.float64) for a in arrays]
    for name, a in zip(names, out, strict=True):
        if a.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    lengths = {name: len(a) for name, a in zip(names, out, strict=True)}
    labels = None
    if groups is not None:
        labels = np.asarray([str(g) for g in groups], dtype=object)
        lengths["groups"] = len(labels)
    if len(set(lengths.values())) > 1:
        raise ValueError(f"lengths differ: {lengths}")
    keep = np.logical_and.reduce([np.isfinite(a) for a in out]) if out else np.ones(0, bool)
    out = [a[keep] for a in out]
    if labels is not None:
        out.append(labels[keep])
    return tuple(out)


def _constant(x: np.ndarray) -> bool:
    return x.size == 0 or bool(np.ptp(x) == 0)


def _correlation(fn, x: np.ndarray, y: np.ndarray) -> float:
    """A scipy correlation statistic, or NaN for fewer than two rows or a constant input."""
    if x.size < 2 or _constant(x) or _constant(y):
        return NAN
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(fn(x, y)[0])


def regression_metrics(predicted: Sequence[float], measured: Sequence[float]) -> dict:
    """Spearman, Kendall (tau-b) and Pearson correlations, MAE and MAPE over finite rows.

    MAPE is the mean of |p - m| / |m| over rows with m != 0 (a fraction, not percent).
    ``n`` is the number of rows left after dropping NaN and infinite values.
    """
    p, m = _finite(("predicted", "measured"), predicted, measured)
    nonzero = m != 0
    return {
        "spearman": _correlation(stats.spearmanr, p, m),
        "kendall": _correlation(stats.kendalltau, p, m),
        "pearson": _correlation(stats.pearsonr, p, m),
        "mae": float(np.mean(np.abs(p - m))) if p.size else NAN,
        "mape": float(np.mean(np.abs(p - m)[nonzero] / np.abs(m[nonzero]))) if nonzero.any() else NAN,
        "n": int(p.size),
    }


def _split(labels: np.ndarray) -> list[np.ndarray]:
    """Row indices of each group, groups in sorted label order."""
    _, inverse = np.unique(labels, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    return np.split(order, np.flatnonzero(np.diff(inverse[order])) + 1) if labels.size else []


def group_spearman(predicted: Sequence[float], measured: Sequence[float], groups: Sequence) -> dict:
    """Spearman correlation within each group, summarised over groups.

    Groups with fewer than two finite rows or constant measured values are skipped.
    A used group whose predictions are all equal ranks nothing and counts as 0.
    Returns ``mean``, ``median``, ``values`` (per used group, in sorted group order)
    and ``groups`` (how many were used).
    """
    values = [rho for _, rho, _ in _spearman_by_group(predicted, measured, groups)]
    return {
        "mean": float(np.mean(values)) if values else NAN,
        "median": float(np.median(values)) if values else NAN,
        "values": values,
        "groups": len(values),
    }


TASK_WEIGHTS = ("rows", "equal")


def task_spearman(
    predicted: Sequence[float], measured: Sequence[float], tasks: Sequence | None = None, weights: str = "rows"
) -> float:
    """Spearman correlation within each task, averaged with each task weighted by its rows
    (``weights="rows"``) or all tasks alike (``"equal"``: the plain mean of per-task figures a
    per-language table reports).

    Ranking across tasks with different scales (bytes of a Python heap, megabytes of a JVM)
    would reward telling the tasks apart; this asks for the order within each. Tasks with
    fewer than two finite rows or constant measured values are skipped; a task whose
    predictions are all equal counts as 0. NaN when no task is usable.
    """
    if weights not in TASK_WEIGHTS:
        raise ValueError(f"task weights must be one of {TASK_WEIGHTS}, got {weights!r}")
    used = [(rho, size) for _, rho, size in _spearman_by_group(predicted, measured, _labels(predicted, tasks))]
    if weights == "equal":
        used = [(rho, 1) for rho, _ in used]
    rows = sum(size for _, size in used)
    return sum(rho * size for rho, size in used) / rows if rows else NAN


def spearman_by_task(
    predicted: Sequence[float], measured: Sequence[float], tasks: Sequence | None = None
) -> dict[str, float]:
    """Spearman correlation within each task, by task name (``""`` without tasks), in sorted order; the
    tasks ``task_spearman`` averages (fewer than two finite rows or constant measured values: left out)."""
    return {label: rho for label, rho, _ in _spearman_by_group(predicted, measured, _labels(predicted, tasks))}


def _labels(predicted: Sequence[float], tasks: Sequence | None) -> Sequence:
    return [""] * len(predicted) if tasks is None else tasks


def _spearman_by_group(predicted: Sequence[float], measured: Sequence[float], groups: Sequence) -> list:
    """(group label, Spearman, finite rows) of each usable group, in sorted group order: groups with fewer
    than two finite rows or constant measured values are skipped; constant predictions give 0."""
    p, m, labels = _finite(("predicted", "measured"), predicted, measured, groups=groups)
    used = []
    for rows in _split(labels):
        if rows.size < 2 or _constant(m[rows]):
            continue
        rho = _correlation(stats.spearmanr, p[rows], m[rows])
        used.append((str(labels[rows[0]]), 0.0 if np.isnan(rho) else rho, int(rows.size)))
    return used


def _tied_pairs(x: np.ndarray) -> int:
    counts = np.unique(x, return_counts=True)[1]
    return int(np.sum(counts * (counts - 1) // 2))


def _concordance(p: np.ndarray, m: np.ndarray) -> tuple[float, int]:
    """(concordant - discordant pairs, pairs with different m) in O(n log n) via Kendall's tau-b."""
    n0 = p.size * (p.size - 1) // 2
    n_m = n0 - _tied_pairs(m)
    n_p = n0 - _tied_pairs(p)
    if n_m == 0 or n_p == 0:  # no pair to order, or every prediction tied (each pair scores 0.5)
        return 0.0, n_m
    tau = _correlation(stats.kendalltau, p, m)
    return float(np.rint(tau * np.sqrt(float(n_m) * float(n_p)))), n_m


def best_of_group(
    predicted: Sequence[float],
    measured: Sequence[float],
    groups: Sequence,
    lower_is_better: bool = True,
    top_fractions: Sequence[float] = (0.1, 0.25),
) -> dict:
    """How well picking each group's best-predicted row picks its truly best row.

    For each group with at least two finite rows the chosen row is the one with the
    best predicted value; when several predictions tie for best, every score is
    averaged over the tied rows (as if one were picked at random). Returned keys:

    - ``regret``: mean of (chosen - best) / |best| over groups with best != 0, where
      chosen and best are measured values (sign flipped when higher is better);
      ``regret_abs``: mean of chosen - best over all groups.
    - ``random_regret``, ``random_regret_abs``: the same for a uniformly random row.
    - ``hit_rate``: fraction of groups whose chosen row measures best (ties count).
    - ``top_10``, ``top_25``, ... (one per fraction p): fraction of groups whose chosen
      row is within the true top max(1, floor(p * rows)) rows, ties included.
    - ``pairwise_accuracy``: over all within-group pairs with different measured
      values, the fraction ordered the same way by the predictions (a prediction tie
      counts 0.5; 0.5 is chance); ``pairs``: how many such pairs.
    - ``groups``: how many groups were used.
    """
    for fraction in top_fractions:
        if not 0 < fraction <= 1:
            raise ValueError(f"top_fractions must be in (0, 1], got {fraction}")
    p, m, labels = _finite(("predicted", "measured"), predicted, measured, groups=groups)
    if not lower_is_better:  # flip so that lower is better below
        p, m = -p, -m
    regret, regret_abs, random_regret, random_abs, hits = [], [], [], [], []
    top: dict[float, list[float]] = {f: [] for f in top_fractions}
    swing, pairs = 0.0, 0
    for rows in _split(labels):
        if rows.size < 2:
            continue
        gp, gm = p[rows], m[rows]
        chosen = gm[gp == gp.min()]
        best = gm.min()
        regret_abs.append(float(np.mean(chosen - best)))
        random_abs.append(float(np.mean(gm - best)))
        if best != 0:
            regret.append(float(np.mean(chosen - best)) / abs(best))
            random_regret.append(float(np.mean(gm - best)) / abs(best))
        hits.append(float(np.mean(chosen == best)))
        ranked = np.sort(gm)
        for fraction in top_fractions:
            threshold = ranked[max(1, int(np.floor(fraction * rows.size + 1e-9))) - 1]
            top[fraction].append(float(np.mean(chosen <= threshold)))
        group_swing, group_pairs = _concordance(gp, gm)
        swing += group_swing
        pairs += group_pairs

    def mean(values: list[float]) -> float:
        return float(np.mean(values)) if values else NAN

    out = {
        "regret": mean(regret),
        "regret_abs": mean(regret_abs),
        "random_regret": mean(random_regret),
        "random_regret_abs": mean(random_abs),
        "hit_rate": mean(hits),
    }
    out.update({f"top_{fraction * 100:g}": mean(top[fraction]) for fraction in top_fractions})
    out["pairwise_accuracy"] = 0.5 + swing / (2 * pairs) if pairs else NAN
    out["pairs"] = pairs
    out["groups"] = len(hits)
    return out


def interval_coverage(lower: Sequence[float], upper: Sequence[float], measured: Sequence[float]) -> float:
    """Fraction of rows (all three values finite) with lower <= measured <= upper; NaN if none."""
    lo, hi, m = _finite(("lower", "upper", "measured"), lower, upper, measured)
    return float(np.mean((lo <= m) & (m <= hi))) if m.size else NAN
