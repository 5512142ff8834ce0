"""Readouts: a new objective as a ridge regression over a trained model's own predicted objectives.

A model that writes a network's latency on 13 devices has, in those 13 numbers, a description of
how the network loads hardware. A new device is rarely one of them, but it is often close to a mix
of them (a GPU at batch 256 like the other large-batch GPUs, an accelerator like none alone). A
readout learns that mix from a few measured inputs: ridge regression of the new objective on the
model's predictions of its own objectives (in log space when every value is positive; inputs
standardized; the penalty chosen by leave-one-out cross-validation), a second or so of fitting and
no training of the network. It is applied to every *sample* of the model, so the new objective
gets a predictive distribution like the others (intervals, calibration). HELP (NeurIPS 2021)
meta-learns a device embedding for the same purpose; here the embedding is the model's output.

The samples' spread is the model's uncertainty, not the ridge's error, so a readout's raw intervals
cover too little (65% at 90% on HELP's six devices from 20 rows). ``calibrate=True`` calibrates them on
the rows that fit it, with no more measurements: each row is read out by the ridge fitted on the
others (leave-one-out) and scored against its value (cross-conformal, ``decoding.calibration``).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import spearmanr
from sklearn.linear_model import RidgeCV

from coderlm.data.checks import check_targets, check_texts
from coderlm.decoding.calibration import Calibration, calibrate, combine
from coderlm.decoding.estimates import point_estimate
from coderlm.options import OptionError

log = logging.getLogger("coderlm")

ALPHAS = (1.0, 10.0, 100.0, 1000.0)  # ridge penalties tried (inputs standardized), by leave-one-out error


@dataclasses.dataclass(frozen=True)
class Readout:
    """``name = bias + weights . standardized(inputs)`` (all in log space when ``log``)."""

    name: str
    inputs: list[int]  # indices of the model's decoded objectives it reads
    log: bool
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    alpha: float
    rows: int  # measured inputs it was fitted on

    def apply(self, values: np.ndarray) -> np.ndarray:
        """The readout of ``values`` (..., k) of the model's decoded objectives: (...)."""
        x = values[..., self.inputs]
        if self.log:
            with np.errstate(divide="ignore", invalid="ignore"):
                x = np.log(np.where(x > 0, x, np.nan))  # a non-positive sample: no readout (NaN)
        y = self.bias + ((x - self.mean) / self.scale) @ self.weights
        return np.exp(y) if self.log else y

    def to_dict(self, names: Sequence[str]) -> dict[str, Any]:
        return {
            "name": self.name,
            "inputs": [names[i] for i in self.inputs],
            "log": self.log,
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "weights": self.weights.tolist(),
            "bias": self.bias,
            "alpha": self.alpha,
            "rows": self.rows,
        }

    @classmethod
    def from_dict(cls, spec: dict[str, Any], names: Sequence[str]) -> Readout:
        unknown = [n for n in spec["inputs"] if n not in names]
        if unknown:
            raise ValueError(f"readout {spec['name']!r} reads {unknown}, which the model does not write")
        arrays = {k: np.asarray(spec[k], dtype=np.float64) for k in ("mean", "scale", "weights")}
        return cls(
            spec["name"],
            [list(names).index(n) for n in spec["inputs"]],
            bool(spec["log"]),
            bias=float(spec["bias"]),
            alpha=float(spec["alpha"]),
            rows=int(spec["rows"]),
            **arrays,
        )


def fit_readout(name: str, predicted: np.ndarray, targets: np.ndarray, inputs: Sequence[int]) -> Readout:
    """Ridge of ``targets`` (n,) on columns ``inputs`` of ``predicted`` (n, k): the model's point predictions
    for the n measured inputs. Log space when every target and every input value is positive."""
    targets = np.asarray(targets, dtype=np.float64).reshape(-1)
    x = np.asarray(predicted, dtype=np.float64)[:, list(inputs)]
    if len(targets) < 3:
        raise ValueError(f"readout {name!r}: {len(targets)} measured input(s); at least 3 are needed")
    if not np.isfinite(targets).all() or not np.isfinite(x).all():
        raise ValueError(f"readout {name!r}: targets and the model's predictions must be finite numbers")
    log = bool((targets > 0).all() and (x > 0).all())
    if log:
        x, targets = np.log(x), np.log(targets)
    mean, scale = x.mean(0), x.std(0)
    scale = np.where(scale > 0, scale, 1.0)
    model = RidgeCV(alphas=ALPHAS).fit((x - mean) / scale, targets)
    weights = np.asarray(model.coef_, dtype=np.float64)
    return Readout(name, list(inputs), log, mean, scale, weights, float(model.intercept_), float(model.alpha_), len(x))


def nearest_input(predicted: np.ndarray, targets: np.ndarray, inputs: Sequence[int]) -> int:
    """The column of ``inputs`` whose values in ``predicted`` (n, k) rank ``targets`` (n,) best (Spearman)."""
    scores = {j: spearmanr(predicted[:, j], targets).statistic for j in inputs}
    return max(inputs, key=lambda j: scores[j] if np.isfinite(scores[j]) else -np.inf)


def readout_columns(decoded: Sequence[str], objective: str, inputs: Sequence[str] | None) -> list[int]:
    """The columns of ``decoded`` (a model's decoded objectives) that readout ``objective`` reads: ``inputs``
    (default all); errors name the option."""
    names = list(decoded if inputs is None else inputs)
    if not names or any(n not in decoded for n in names):
        raise OptionError("inputs", f"must name some of the objectives the model decodes {list(decoded)}, got {names}")
    if objective in decoded:
        raise OptionError("objective", f"{objective!r} is decoded by the model already; name the readout apart")
    return [list(decoded).index(n) for n in names]


def left_out(samples: np.ndarray, targets: np.ndarray, inputs: Sequence[int], name: str, nearest: bool) -> np.ndarray:
    """Each measured row's ``samples`` (n, S, k) read out by the readout fitted on the other rows (the input
    chosen again without it when ``nearest``): (n, S), for cross-conformal calibration."""
    predicted, out = point_estimate(samples), np.empty(samples.shape[:2])
    for i in range(len(targets)):
        rest = np.arange(len(targets)) != i
        columns = [nearest_input(predicted[rest], targets[rest], inputs)] if nearest else inputs
        out[i] = fit_readout(name, predicted[rest], targets[rest], columns).apply(samples[i])
    return out


def cross_calibration(samples: np.ndarray, targets: np.ndarray, inputs: Sequence[int], name: str, nearest: bool):
    """The cross-conformal calibration of readout ``name`` (one objective) on the rows that fit it."""
    if len(targets) < 4:
        raise ValueError(f"readout {name!r}: calibrating on the fitted rows needs at least 4, got {len(targets)}")
    calibration = calibrate(left_out(samples, targets, inputs, name, nearest)[..., None], targets[:, None])
    return dataclasses.replace(calibration, kind="cross-conformal")


def add_readout(rlm, texts, targets, objective: str, inputs, seed, nearest: bool, calibrated: bool) -> Readout:
    """``RegressionLM.fit_readout``: fit the readout on ``rlm``'s predictions for ``texts`` and add it to
    ``rlm`` (its ``readouts_`` and ``objectives_``); ``calibrated``: calibrate it on the same rows
    (``cross_calibration``). The model's calibration keeps the other objectives it covers."""
    decoded = rlm.decoded_objectives_
    columns = readout_columns(decoded, objective, inputs)  # checks the names before any sampling
    texts = check_texts(texts)
    values = check_targets(targets, len(texts), 1, ())[:, 0]
    samples = rlm.codec_.decode(rlm.sample_tokens(texts, seed=seed))
    predicted = point_estimate(samples)
    earlier = getattr(rlm, "calibration_", None)
    own: Calibration | None = None
    if calibrated:
        own = cross_calibration(samples, values, columns, objective, nearest)
    elif earlier is not None:
        log.warning("the model's calibration does not cover readout %r: its intervals stay raw", objective)
    if nearest:
        columns = [nearest_input(predicted, values, columns)]
    readout = fit_readout(objective, predicted, values, columns)
    before = [name if name != objective else "" for name in rlm.objectives_]  # a replaced readout's scores go
    rlm.readouts_ = [r for r in rlm.readouts_ if r.name != objective] + [readout]
    rlm.objectives_ = decoded + [r.name for r in rlm.readouts_]
    rlm.calibration_ = combine([(earlier, before), (own, [objective])], rlm.objectives_)
    return readout
