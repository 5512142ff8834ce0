"""Conformal calibration of the sampled intervals: coverage that holds, not just hoped for.

The central interval of the samples at level ``a`` covers the truth ``a`` of the time only if the
model's distribution is right. Conformal calibration measures how far outside its interval each
of ``n`` held-out values falls (the score ``max(lower - y, y - upper)``, negative inside) and widens
every later interval by the ``ceil((n + 1) a)``-th smallest score. If calibration and test rows are
exchangeable, the widened interval covers at least ``a`` of test values (conformalized quantile
regression, Romano et al. 2019). Scores are taken in log space for objectives whose values and
samples are positive (latency, memory: errors are relative), else in the values' own units.

A calibration needs ``n >= a / (1 - a)`` rows to promise level ``a`` (9 for 90%, 4 for 80%);
with fewer, that level cannot be promised and ``interval`` says so. Scores are kept per level (the
interval of each level has its own bounds) for ``LEVELS``. An objective with no calibration value
(e.g. one a fine-tuned model writes only as context) keeps its raw intervals.

Split conformal needs rows the model never saw. A readout (``coderlm.readout``) can do without them: each
measured row is scored against the readout fitted on the *other* rows (cross-conformal, leave-one-out;
``kind`` says which), so the rows that fit it calibrate it too, and ``combine`` joins calibrations of
different objectives by name.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from coderlm.decoding.estimates import central_interval

LEVELS = (0.5, 0.8, 0.9, 0.95)


class CoverageError(ValueError):
    """The calibration set is too small to promise the level asked for."""


def smallest_set(level: float) -> int:
    """Rows needed to promise ``level``: the smallest n with ceil((n + 1) level) <= n."""
    return math.ceil(level / (1.0 - level) - 1e-9)


@dataclasses.dataclass
class Calibration:
    scores: dict[float, list[np.ndarray]]  # level -> per objective: sorted conformal scores of the rows
    log: list[bool]  # per objective: scores in log space
    kind: str = "split-conformal"  # or "cross-conformal" (a readout's leave-one-out scores), or both, joined

    @property
    def size(self) -> int:
        """Calibration rows (of the calibrated objective with the fewest values)."""
        return min((len(s) for s in next(iter(self.scores.values())) if len(s)), default=0)

    def correction(self, level: float, objective: int) -> float:
        """How much to widen objective ``objective``'s ``level`` interval (in its score space)."""
        if level not in self.scores:
            raise CoverageError(f"no calibration for level {level}; calibrated levels: {sorted(self.scores)}")
        scores = self.scores[level][objective]
        n = len(scores)
        rank = math.ceil((n + 1) * level - 1e-9)
        if rank > n:
            raise CoverageError(
                f"{n} calibration rows cannot promise {level:.0%} coverage (at least {smallest_set(level)} needed); "
                "calibrate on more rows or ask for a lower level"
            )
        return float(scores[max(rank, 1) - 1])

    def interval(self, samples: np.ndarray, level: float) -> np.ndarray:
        """Calibrated central intervals (n, k, 2) of ``samples`` (n, S, k) at ``level``."""
        raw = central_interval(samples, level)
        out = np.empty_like(raw)
        for j, log in enumerate(self.log):
            if level in self.scores and not len(self.scores[level][j]):  # no value to calibrate on: raw
                out[:, j] = raw[:, j]
                continue
            q = self.correction(level, j)
            low, high = raw[:, j, 0], raw[:, j, 1]
            if log:
                out[:, j, 0], out[:, j, 1] = low * math.exp(-q), high * math.exp(q)
            else:
                out[:, j, 0], out[:, j, 1] = low - q, high + q
        return out

    def promised(self) -> list[float]:
        """The calibrated levels this calibration can promise."""
        return [level for level in sorted(self.scores) if self.size >= smallest_set(level)]

    def to_dict(self) -> dict[str, Any]:
        scores = {str(level): [s.tolist() for s in per] for level, per in self.scores.items()}
        return {
            "kind": self.kind,
            "size": self.size,
            "promised": self.promised(),
            "log": self.log,
            "scores": scores,
        }

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> Calibration:
        scores = {float(level): [np.asarray(s, dtype=np.float64) for s in per] for level, per in spec["scores"].items()}
        return cls(scores, [bool(x) for x in spec["log"]], spec.get("kind", "split-conformal"))

    def named(self, names: list[str]) -> dict[str, tuple[bool, dict[float, np.ndarray]]]:
        """Per objective name (``names``: the objectives in this calibration's order) with scores: its log flag
        and scores per level."""
        return {
            name: (self.log[j], {level: per[j] for level, per in self.scores.items()})
            for j, name in enumerate(names)
            if len(next(iter(self.scores.values()))[j])
        }


def combine(parts: list[tuple[Calibration | None, list[str]]], names: list[str]) -> Calibration | None:
    """One calibration over objectives ``names`` from ``parts`` (a calibration, or None, and the objective
    names it was made for); where two calibrate the same objective, the later wins; an objective none
    calibrates (or one no longer in ``names``) keeps raw intervals. None if none is left."""
    known: dict[str, tuple[bool, dict[float, np.ndarray]]] = {}
    kinds: dict[str, str] = {}
    for calibration, their_names in parts:
        for name, entry in (calibration.named(their_names) if calibration else {}).items():
            if name in names:
                known[name], kinds[name] = entry, calibration.kind
    if not known:
        return None
    levels = sorted({level for _, per in known.values() for level in per})
    empty = np.empty(0)
    scores = {level: [known[n][1].get(level, empty) if n in known else empty for n in names] for level in levels}
    log = [known[n][0] if n in known else False for n in names]
    return Calibration(scores, log, " + ".join(dict.fromkeys(kinds[n] for n in names if n in kinds)))


def calibrate(samples: np.ndarray, values: np.ndarray, levels: tuple[float, ...] = LEVELS) -> Calibration:
    """Conformal scores of held-out ``values`` (n, k) against the intervals of their ``samples`` (n, S, k), for
    each of ``levels``. Rows missing an objective (NaN), or whose interval is not finite (mostly ``<NaN>``
    samples, or an infinite bound), are left out of that objective's scores; a few NaN samples among numbers
    are left out of the interval as in every statistic. An objective with no value at all keeps raw intervals."""
    values = np.asarray(values, dtype=np.float64).reshape(len(samples), -1)
    log = [
        bool((values[:, j][np.isfinite(values[:, j])] > 0).all() and (s[np.isfinite(s)] > 0).all())
        for j, s in enumerate(np.moveaxis(np.asarray(samples, dtype=np.float64), -1, 0))
    ]
    scores: dict[float, list[np.ndarray]] = {}
    for level in levels:
        raw = central_interval(samples, level)
        scores[level] = []
        for j in range(values.shape[1]):
            present = np.isfinite(values[:, j]) & np.isfinite(raw[:, j]).all(-1)
            y, low, high = values[present, j], raw[present, j, 0], raw[present, j, 1]
            if log[j]:
                y, low, high = np.log(y), np.log(low), np.log(high)
            scores[level].append(np.sort(np.maximum(low - y, y - high)))
    if not max(len(s) for s in scores[levels[0]]):
        raise CoverageError("no calibration row has a value for any objective")
    return Calibration(scores, log)
