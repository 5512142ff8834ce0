"""Scores of program predictions: Spearman per language and target, and within-problem pair accuracy."""

from __future__ import annotations

from itertools import combinations

import numpy as np
from scipy.stats import spearmanr

OBJECTIVES = ["peak_memory_bytes", "runtime_s"]
SHORT = {"peak_memory_bytes": "mem", "runtime_s": "time"}


def per_language(predicted: np.ndarray, measured: np.ndarray, tasks: list[str]) -> dict[str, float]:
    out = {}
    tasks = np.array(tasks)
    for language in sorted(set(tasks)):
        rows = tasks == language
        for j, name in enumerate(OBJECTIVES):
            ok = rows & ~np.isnan(predicted[:, j]) & ~np.isnan(measured[:, j])
            rho = spearmanr(predicted[ok, j], measured[ok, j]).statistic if ok.sum() >= 5 else np.nan
            out[f"{language}/{SHORT[name]}"] = float(rho)
    for name in OBJECTIVES:
        values = [v for k, v in out.items() if k.endswith(f"/{SHORT[name]}") and not np.isnan(v)]
        out[f"mean/{SHORT[name]}"] = float(np.mean(values)) if values else np.nan
    return out


def pairwise(predicted: np.ndarray, measured: np.ndarray, tasks: list[str], groups: list[str]) -> dict[str, float]:
    """Per language: share of same-problem solution pairs ordered correctly by predicted memory."""
    by: dict[tuple[str, str], list[int]] = {}
    for i, (task, group) in enumerate(zip(tasks, groups, strict=True)):
        by.setdefault((task, group), []).append(i)
    hits: dict[str, list[int]] = {}
    for (task, _), rows in by.items():
        for a, b in combinations(rows, 2):
            if measured[a, 0] == measured[b, 0] or np.isnan(predicted[[a, b], 0]).any():  # NaN: memory not predicted
                continue
            right = (predicted[a, 0] < predicted[b, 0]) == (measured[a, 0] < measured[b, 0])
            hits.setdefault(task, []).append(int(right))
    out = {f"{task}/pairs": float(np.mean(h)) for task, h in sorted(hits.items())}
    out |= {f"{task}/n_pairs": len(h) for task, h in sorted(hits.items())}
    return out


def scores(predicted: np.ndarray, method: str, test: dict, **extra) -> dict:
    """A table row: per-language Spearman and within-problem pairs of ``predicted`` on ``test`` (its split
    name, measured targets, tasks and groups)."""
    measured, tasks = test["measured"], test["tasks"]
    return {
        "split": test["split"],
        "method": method,
        **extra,
        **per_language(predicted, measured, tasks),
        **pairwise(predicted, measured, tasks, test["groups"]),
    }
