"""Targets spelled by their rank: a monotone map from target units to [1.5, 9.5] fitted on the training values.

A decimal spelling puts a target's ranking information wherever its distribution puts it. NAS-Bench-201
test accuracies are mostly 84-91 %: in ``<+><E-2><8><6><6><3>`` the first mantissa digit is 8 for nearly
every network and the ranking sits in the second and third digits, which carry little of the loss (and
less with ``digit_decay``). ``QuantileScale`` spells instead each value's position in the training
distribution: a value at training quantile p is written as 1.5 + 8 p (one decade, one exponent), so the
first mantissa digit is roughly the decile, the second the percentile, whatever the units.

The map is piecewise linear through the training set's distinct values (at most ``MAX_KNOTS`` of them,
evenly spaced among the distinct values, both ends kept), each at its mid-rank, so it is strictly
increasing: ranking is unchanged, and sampled values map back exactly through the inverse. Beyond the
training range it continues linearly with the slope of the whole range (a value a full range above the
largest lands at 17.5), so an input unlike any seen can still be predicted outside it. An objective with
a single training value is shifted to 5.5. Non-finite values (special tokens) pass through unchanged.

``target_scale="auto"`` spells by rank only the objectives whose decimal spelling wastes its leading
tokens: those where at least ``CONCENTRATED`` of the training values share sign, decade and first digit
(``leading_share``). Measured: NB201 CIFAR-10 test accuracy 0.82; every latency, FLOPs, MBXP memory and
runtime objective 0.22-0.45. The others are spelled as they are (an objective with no knots).

``target_scale="linear"`` keeps two knots per objective, the smallest and largest training values, so
every value is written in proportion to where it lies in the training range (1.5 .. 9.5, one decade),
as a regression head normalizes its targets: no exponent to choose for a latency whose values straddle
a power of ten (NB201 Pixel3: 46 % under 10 ms), at the cost of crowding skewed objectives (accuracy).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from coderlm.options import OptionError

LOW, HIGH = 1.5, 9.5  # where the smallest and largest training ranks are written
MAX_KNOTS = 1001
CONCENTRATED = 0.6  # "auto": rank-spell an objective when this share of its values shares its leading tokens
TARGET_SCALES = ("auto", "raw", "quantile", "linear")


def leading_share(column: np.ndarray) -> float:
    """The largest share of the finite values that agree in sign, decade and first significant digit
    (what a decimal spelling writes first: P10's sign, exponent and first mantissa digit)."""
    column = np.asarray(column, dtype=np.float64)
    column = column[np.isfinite(column)]
    if not len(column):
        return 0.0
    magnitude = np.abs(column)
    decade = np.floor(np.log10(np.where(magnitude > 0, magnitude, 1.0)))
    first = np.floor(magnitude / 10.0**decade + 1e-9).clip(0, 9)
    keys = np.stack([np.sign(column), np.where(magnitude > 0, decade, -999), first], 1)
    return float(np.unique(keys, axis=0, return_counts=True)[1].max() / len(column))


def scaled_objectives(values: np.ndarray, kind: str) -> list[bool]:
    """Which objectives of training targets (n, k) to spell through the scale under ``kind`` (see TARGET_SCALES)."""
    values = np.asarray(values, dtype=np.float64)
    if kind == "auto":
        return [leading_share(values[:, j]) >= CONCENTRATED for j in range(values.shape[1])]
    return [kind in ("quantile", "linear")] * values.shape[1]


@dataclasses.dataclass(frozen=True)
class QuantileScale:
    """Per objective: knots in target units (strictly increasing) and where each is spelled."""

    values: tuple[tuple[float, ...], ...]  # per objective, distinct training values, ascending; () = as they are
    spelled: tuple[tuple[float, ...], ...]  # per objective, the value each knot is written as

    def __post_init__(self) -> None:
        if len(self.values) != len(self.spelled):
            raise ValueError("quantile scale: one list of values and one of spellings per objective")
        for j, (x, u) in enumerate(zip(self.values, self.spelled, strict=True)):
            x, u = np.asarray(x, dtype=np.float64), np.asarray(u, dtype=np.float64)
            if len(x) != len(u) or not (np.isfinite(x).all() and np.isfinite(u).all()):
                raise ValueError(f"quantile scale, objective {j}: needs as many finite spellings as values")
            if (np.diff(x) <= 0).any() or (np.diff(u) <= 0).any():
                raise ValueError(f"quantile scale, objective {j}: values and spellings must increase")

    @classmethod
    def fit(cls, values: np.ndarray, which: list[bool] | None = None, linear: bool = False) -> QuantileScale:
        """From training targets (n, k), for the objectives ``which`` marks (default: all; the others are
        spelled as they are); NaN (missing) and infinite entries are ignored. An objective with no finite
        value raises ValueError naming it."""
        values = np.asarray(values, dtype=np.float64)
        knots, spelled = [], []
        for j in range(values.shape[1]):
            if which is not None and not which[j]:
                knots.append(())
                spelled.append(())
                continue
            column = values[:, j][np.isfinite(values[:, j])]
            if not len(column):
                raise ValueError(f"target_scale: objective {j} has no finite training value")
            distinct, counts = np.unique(column, return_counts=True)
            ranks = (np.cumsum(counts) - counts / 2) / len(column)  # mid-rank of each distinct value, in (0, 1)
            if linear:  # the range's two ends only: every value written in proportion to where it lies
                distinct = np.unique(distinct[[0, -1]])
                ranks = np.linspace(0.0, 1.0, len(distinct))
            elif len(distinct) > MAX_KNOTS:  # evenly spaced among the distinct values, both ends kept
                keep = np.unique(np.round(np.linspace(0, len(distinct) - 1, MAX_KNOTS)).astype(int))
                distinct, ranks = distinct[keep], ranks[keep]
            if len(distinct) == 1:
                spelled_at = np.array([(LOW + HIGH) / 2])
            else:
                spelled_at = LOW + (HIGH - LOW) * (ranks - ranks[0]) / (ranks[-1] - ranks[0])
            knots.append(tuple(float(v) for v in distinct))
            spelled.append(tuple(float(u) for u in spelled_at))
        return cls(tuple(knots), tuple(spelled))

    @classmethod
    def choose(cls, values: np.ndarray, kind: str) -> QuantileScale | None:
        """The scale ``target_scale=kind`` gives training targets (n, k); None when no objective is ranked.
        An unknown kind raises OptionError naming the option."""
        if kind not in TARGET_SCALES:
            raise OptionError("target_scale", f"must be one of {list(TARGET_SCALES)}, got {kind!r}")
        which = scaled_objectives(values, kind)
        return cls.fit(values, which, linear=kind == "linear") if any(which) else None

    @property
    def num_objectives(self) -> int:
        return len(self.values)

    @property
    def ranked(self) -> list[bool]:
        """Per objective: spelled by rank (True) or as it is."""
        return [len(x) > 0 for x in self.values]

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
            if len(x) == 0:  # spelled as it is
                continue
            column = values[..., j]
            if len(x) == 1:  # a single training value: a shift
                mapped = column - x[0] + u[0]
            else:
                slope = (u[-1] - u[0]) / (x[-1] - x[0])
                mapped = np.interp(column, x, u)
                mapped = np.where(column < x[0], u[0] + (column - x[0]) * slope, mapped)
                mapped = np.where(column > x[-1], u[-1] + (column - x[-1]) * slope, mapped)
            out[..., j] = np.where(np.isfinite(column), mapped, column)
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
