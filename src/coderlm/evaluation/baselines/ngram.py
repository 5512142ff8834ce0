"""Bag-of-n-grams baselines over code-aware tokens: gradient-boosted trees and nearest neighbours.

Both share ``NgramFeaturizer``: counts of token 1- and 2-grams (identifiers,
numbers, single punctuation / operator characters; case kept), the
``max_features`` most frequent in the training texts, plus ``log(1 + characters)``
as one more column. Targets spanning decades are regressed in log10 space (see
``use_log_target``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
from sklearn.neighbors import KNeighborsRegressor
from threadpoolctl import threadpool_limits

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

# identifiers | numbers (1, 2.5, 1e-3) | any single non-space character that is neither
TOKEN_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[^\sA-Za-z0-9_]"


class NgramFeaturizer:
    """Token n-gram counts (sparse) and the log length of each text; fitted on training texts."""

    def __init__(self, ngram_range: tuple[int, int] = (1, 2), max_features: int | None = 4096) -> None:
        self.ngram_range = ngram_range
        self.max_features = max_features

    def fit(self, texts: Sequence[str]) -> NgramFeaturizer:
        self.vectorizer_ = CountVectorizer(
            token_pattern=TOKEN_PATTERN,
            lowercase=False,
            ngram_range=tuple(self.ngram_range),
            max_features=self.max_features,
            dtype=np.float64,
        ).fit(texts)
        return self

    def counts(self, texts: Sequence[str]) -> sp.csr_matrix:
        """(n, vocabulary) n-gram counts, float64 CSR."""
        check_fitted(self, "vectorizer_")
        return sp.csr_matrix(self.vectorizer_.transform(texts))

    @staticmethod
    def log_length(texts: Sequence[str]) -> np.ndarray:
        """(n, 1) ``log(1 + characters)``."""
        return np.log1p(text_lengths(texts))[:, None]

    def transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        """(n, vocabulary + 1): counts, then the log length as the last column."""
        return sp.hstack([self.counts(texts), self.log_length(texts)], format="csr")


class _PerObjective:
    """Fits one scikit-learn regressor per objective on the rows where it is present."""

    def __init__(self, ngram_range: tuple[int, int], max_features: int | None) -> None:
        self.ngram_range = ngram_range
        self.max_features = max_features

    def _features(self, texts: list[str], fitting: bool) -> np.ndarray | sp.csr_matrix:
        raise NotImplementedError

    def _regressor(self, rows: int):
        raise NotImplementedError

    def fit(self, texts: Sequence[str], targets, tasks: Sequence[str] | None = None) -> _PerObjective:
        """Learn the n-gram vocabulary, then one regressor per objective."""
        texts, values, _ = check_fit_inputs(texts, targets, tasks)
        self.featurizer_ = NgramFeaturizer(self.ngram_range, self.max_features).fit(texts)
        features = self._features(texts, fitting=True)
        self.models_, log = [], []
        for j in range(values.shape[1]):
            rows = np.flatnonzero(~np.isnan(values[:, j]))
            log.append(log_scale(values[rows, j]))
            y = to_fit_space(values[rows, j], log[-1])
            self.models_.append(self._regressor(len(rows)).fit(features[rows], y))
        self.log_target_ = np.array(log)  # (k,) log_scale per objective: 0 = linear
        return self

    def predict(self, texts: Sequence[str], tasks: Sequence[str] | None = None) -> np.ndarray:
        """Predictions (n, k) float64."""
        check_fitted(self, "models_")
        texts = check_texts(texts)
        check_tasks(tasks, len(texts))
        features = self._features(texts, fitting=False)
        columns = [
            from_fit_space(np.asarray(model.predict(features), dtype=np.float64), float(log))
            for model, log in zip(self.models_, self.log_target_, strict=True)
        ]
        return np.stack(columns, axis=1)


class NgramGBDT(_PerObjective):
    """One ``HistGradientBoostingRegressor`` per objective on ``log(1 + counts)`` and the log length.

    Args:
        ngram_range, max_features: the featurizer's (1- and 2-grams, 4096 most frequent).
        max_iter, learning_rate, max_leaf_nodes, min_samples_leaf: boosting options.
        early_stopping: hold out 10% to stop boosting early (off by default: deterministic).
        random_state: seeds the boosting (and its held-out split).
        n_threads: OpenMP threads for boosting; ``None`` uses all cores. On a busy
            machine with few cores, 1 can be many times faster.
    """

    def __init__(
        self,
        ngram_range: tuple[int, int] = (1, 2),
        max_features: int | None = 4096,
        max_iter: int = 300,
        learning_rate: float = 0.1,
        max_leaf_nodes: int = 31,
        min_samples_leaf: int = 20,
        early_stopping: bool = False,
        random_state: int = 0,
        n_threads: int | None = None,
    ) -> None:
        super().__init__(ngram_range, max_features)
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.early_stopping = early_stopping
        self.random_state = random_state
        self.n_threads = n_threads

    def fit(self, texts: Sequence[str], targets, tasks: Sequence[str] | None = None) -> NgramGBDT:
        """Learn the n-gram vocabulary, then one boosted model per objective."""
        with threadpool_limits(self.n_threads, user_api="openmp"):
            return super().fit(texts, targets, tasks)

    def predict(self, texts: Sequence[str], tasks: Sequence[str] | None = None) -> np.ndarray:
        """Predictions (n, k) float64."""
        with threadpool_limits(self.n_threads, user_api="openmp"):
            return super().predict(texts, tasks)

    def _features(self, texts: list[str], fitting: bool) -> np.ndarray:
        counts = self.featurizer_.counts(texts).log1p()
        length = self.featurizer_.log_length(texts)
        return np.hstack([counts.toarray(), length]).astype(np.float32)

    def _regressor(self, rows: int) -> HistGradientBoostingRegressor:
        return HistGradientBoostingRegressor(
            max_iter=self.max_iter,
            learning_rate=self.learning_rate,
            max_leaf_nodes=self.max_leaf_nodes,
            min_samples_leaf=self.min_samples_leaf,
            early_stopping=self.early_stopping,
            random_state=self.random_state,
        )


class NgramKNN(_PerObjective):
    """Distance-weighted k nearest neighbours (cosine) on TF-IDF n-grams and the log length.

    The TF-IDF rows have unit norm, which hides how long a text is; so the log
    length, standardized on the training texts and multiplied by ``length_weight``,
    is appended as one more column (``length_weight=0`` leaves it out).

    Args:
        n_neighbors: neighbours averaged (fewer when an objective has fewer rows).
        ngram_range, max_features: the featurizer's (1- and 2-grams, 4096 most frequent).
        length_weight: scale of the standardized log-length column.
    """

    def __init__(
        self,
        n_neighbors: int = 5,
        ngram_range: tuple[int, int] = (1, 2),
        max_features: int | None = 4096,
        length_weight: float = 1.0,
    ) -> None:
        super().__init__(ngram_range, max_features)
        self.n_neighbors = n_neighbors
        self.length_weight = length_weight

    def _features(self, texts: list[str], fitting: bool) -> sp.csr_matrix:
        counts = self.featurizer_.counts(texts)
        length = self.featurizer_.log_length(texts)
        if fitting:
            self.tfidf_ = TfidfTransformer().fit(counts)
            std = float(length.std())
            self.length_mean_, self.length_std_ = float(length.mean()), std if std > 0 else 1.0
        length = self.length_weight * (length - self.length_mean_) / self.length_std_
        return sp.hstack([self.tfidf_.transform(counts), length], format="csr")

    def _regressor(self, rows: int) -> KNeighborsRegressor:
        if self.n_neighbors < 1:
            raise ValueError(f"n_neighbors must be >= 1, got {self.n_neighbors!r}")
        return KNeighborsRegressor(
            n_neighbors=min(self.n_neighbors, rows), weights="distance", metric="cosine", algorithm="brute"
        )
