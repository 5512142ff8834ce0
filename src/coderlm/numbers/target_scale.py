"""Targets spelled by their rank: a monotone map from target units to [1.5, 9.5] fitted on the training values.

A decimal spelling puts a target's ranking information wherever its distribution puts it. NAS-Bench-201
test accuracies are mostly 84-91 %: in ``<+><E-2><8><6><6><3>`` the first mantissa digit is 8 for nearly
every network and the ranking sits in the second and third digits, which carry little of the loss (and
less with ``digit_decay``). ``QuantileScale`` spells instead each value's position in the training
distribution: a value at training quantile p is written as 1.5 + 8 p (one decade, one exponent), so the
first mantissa digit is roughly the decile, the second the percentile, whatever the units.

The map is piecewise linear through the training set's distinct values (at most ``MAX_KNOTS`` of them,
at evenly spaced ranks), each at its mid-rank, so it is strictly increasing: ranking is unchanged, and
sampled values map back exactly through the inverse. Beyond the training range it continues linearly
with the slope of the whole range (a value a full range above the largest lands at 17.5), so an input
unlike any seen can still be predicted outside it. An objective with a single training value is
shifted to 5.5. Non-finite values (special tokens) pass through unchanged.
"""

from __future__ import annotations

import dataclasses

import numpy as np

LOW, HIGH = 1.5, 9.5  # where the smallest and largest training ranks are written
MAX_KNOTS = 1001


@dataclasses.dataclass(frozen=True)
class QuantileScale:
    """Per objective: knots in target units (strictly increasing) and where each is spelled."""

    values: tuple[tuple[float, ...], ...]  # per objective, distinct training values, ascending
    spelled: tuple[tuple[float, ...], ...]  # per objective, the value each knot is written as

    def __post_init__(self) -> None:
        if len(self.values) != len(self.spelled):
            raise ValueError("quantile scale: one list of values and one of spellings per objective")
        for j, (x, u) in enumerate(zip(self.values, self.spelled, strict=True)):
            x, u = np.asarray(x, dtype=np.float64), np.asarray(u, dtype=np.float64)
            if len(x) == 0 or len(x) != len(u) or not (np.isfinite(x).all() and np.isfinite(u).all()):
                raise ValueError(f"quantile scale, objective {j}: needs as many finite spellings as values")
            if (np.diff(x) <= 0).any() or (np.diff(u) <= 0).any():
                raise ValueError(f"quantile scale, objective {j}: values and spellings must increase")

    @classmethod
    def fit(cls, values: np.ndarray) -> QuantileScale:
        """From training targets (n, k); NaN (missing) and infinite entries are ignored. An objective
        with no finite value raises ValueError naming it."""
        values = np.asarray(values, dtype=np.float64)
        knots, spelled = [], []
        for j in range(values.shape[1]):
            column = values[:, j][np.isfinite(values[:, j])]
            if not len(column):
                raise ValueError(f"target_scale='quantile': objective {j} has no finite training value")
            distinct, counts = np.unique(column, return_counts=True)
            ranks = (np.cumsum(counts) - counts / 2) / len(column)  # mid-rank of each distinct value, in (0, 1)
            if len(distinct) > MAX_KNOTS:  # evenly spaced among the distinct values, both ends kept
                keep = np.unique(np.round(np.linspace(0, len(distinct) - 1, MAX_KNOTS)).astype(int))
                distinct, ranks = distinct[keep], ranks[keep]
            if len(distinct) == 1:
                spelled_at = np.array([(LOW + HIGH) / 2])
            else:
                spelled_at = LOW + (HIGH - LOW) * (ranks - ranks[0]) / (ranks[-1] - ranks[0])
            knots.append(tuple(float(v) for v in distinct))
            spelled.append(tuple(float(u) for u in spelled_at))
        return cls(tuple(knots), tuple(spelled))

    @property
    def num_objectives(self) -> int:
        return len(self.values)

    def forward(self, values: np.ndarray) -> np.ndarray:
        """Targets (..., k) in their units -> the values spelled (..., k)."""
        return self._map(values, self.values, self.spelled)

    def inverse(self, spelled: np.ndarray) -> np.ndarray:
        """Decoded values (..., k) -> targets in their units (..., k)."""
        return self._map(spelled, self.spelled, self.values)

    def _map(self, values: np.ndarray, source: tuple, target: tuple) -> np.ndarray:
        values = np.asarray(values, dtype=np.float64)
        if values.shape[-1] != self.num_objectives:
            raise ValueError(f"quantile scale: {self.num_objectives} objectives, got values of shape {values.shape}")
        out = values.copy()
        for j, (x, u) in enumerate(zip(source, target, strict=True)):
            x, u = np.asarray(x), np.asarray(u)
            column = values[..., j]
            finite = np.isfinite(column)
            if len(x) == 1:  # a single training value: a shift
                mapped = column - x[0] + u[0]
            else:
                slope = (u[-1] - u[0]) / (x[-1] - x[0])
                mapped = np.interp(column, x, u)
                mapped = np.where(column < x[0], u[0] + (column - x[0]) * slope, mapped)
                mapped = np.where(column > x[-1], u[-1] + (column - x[-1]) * slope, mapped)
            out[..., j] = np.where(finite, mapped, column)
        return out

    def to_dict(self) -> dict:
        return {
            "kind": "quantile",
            "values": [list(x) for x in self.values],
            "spelled": [list(u) for u in self.spelled],
        }

    @classmethod
    def from_dict(cls, spec: dict) -> QuantileScale:
        if spec.get("kind") != "quantile" or not {"values", "spelled"} <= set(spec):
            raise ValueError(f"target scale: expected kind 'quantile' with values and spelled, got keys {sorted(spec)}")
        return cls(
            tuple(tuple(map(float, x)) for x in spec["values"]), tuple(tuple(map(float, u)) for u in spec["spelled"])
        )


TARGET_SCALES = ("raw", "quantile")
