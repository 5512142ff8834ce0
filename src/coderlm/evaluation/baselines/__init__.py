"""Baselines trained and evaluated on the same split as the RLM.

Every baseline follows one interface (scikit-learn conventions: ``__init__`` only
stores its arguments, ``fit`` returns ``self``, learned state ends in ``_``):

    fit(texts, targets, tasks=None) -> self      # targets (n,) or (n, k); NaN = missing objective
    predict(texts, tasks=None) -> (n, k) float64

Each objective is fitted on the rows where it is present.

    >>> model = make_baseline("gbdt", max_iter=200).fit(texts, targets)
    >>> model.predict(new_texts)

========================  ===============================================================
``regression_head_norm``  RLM encoder + pooled linear head, MSE on [0, 1]-scaled targets
``regression_head_raw``   the same on raw targets (the paper's ablation: bad across decades)
``regression_head_log``   the same, objectives spanning decades in signed log space first (fair there)
``gbdt``                  gradient-boosted trees on token n-gram counts + log length
``knn``                   cosine k nearest neighbours on TF-IDF n-grams + log length
``length``                a line on log(1 + text length): what size alone explains
========================  ===============================================================
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from coderlm.evaluation.baselines.base import Baseline, use_log_target
from coderlm.evaluation.baselines.length import TextLength
from coderlm.evaluation.baselines.ngram import NgramFeaturizer, NgramGBDT, NgramKNN
from coderlm.evaluation.baselines.regression_head import RegressionHeadRegressor

BASELINES: dict[str, Callable[..., Baseline]] = {
    "regression_head_norm": functools.partial(RegressionHeadRegressor, normalize=True),
    "regression_head_raw": functools.partial(RegressionHeadRegressor, normalize=False),
    "regression_head_log": functools.partial(RegressionHeadRegressor, normalize=True, log_target=True),
    "gbdt": NgramGBDT,
    "knn": NgramKNN,
    "length": TextLength,
}


def baseline_names(spec: str) -> list[str]:
    """The registry names in a comma-separated ``spec`` ("" or "''": none); ValueError naming any unknown one,
    so that a command can refuse a typo before it trains anything."""
    names = [n.strip() for n in spec.split(",") if n.strip() and n.strip() not in ("''", '""')]
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(f"unknown baseline(s) {', '.join(map(repr, unknown))}; known: {', '.join(sorted(BASELINES))}")
    return names


def make_baseline(name: str, **options) -> Baseline:
    """A new, unfitted baseline by registry name; ``options`` go to its constructor."""
    if name not in BASELINES:
        raise ValueError(f"unknown baseline {name!r}; known: {sorted(BASELINES)}")
    return BASELINES[name](**options)


__all__ = [
    "BASELINES",
    "Baseline",
    "NgramFeaturizer",
    "NgramGBDT",
    "NgramKNN",
    "RegressionHeadRegressor",
    "TextLength",
    "baseline_names",
    "make_baseline",
    "use_log_target",
]
