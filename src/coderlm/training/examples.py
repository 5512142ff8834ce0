"""Training rows -> tensors, apart from any model weights: inputs checked, missing targets handled,
targets spelled as number tokens with a loss weight per token, inputs tokenized, and, with a
frozen pretrained encoder, its states computed once and cached.

``missing`` decides what a missing target (None or NaN) means, with the same names as the
dataset reader and the command line (``coderlm.data.MISSING_POLICIES``): ``"error"`` (it is an
error, unless specials has ``"nan"``), ``"skip"`` (drop the row), ``"mask"`` (keep the row, leave
that objective out of the loss), ``"special"`` (learn it as the ``<NaN>`` token) or ``"auto"``
(``"special"`` where the row's task never has the objective, else drop the row).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from coderlm.data.checks import check_targets, check_texts, resolve_auto_missing
from coderlm.data.schema import MISSING_POLICIES
from coderlm.model.hf_encoder import PretrainedEncoder
from coderlm.model.transformer import EncoderDecoder
from coderlm.numbers.codec import NumberCodec
from coderlm.numbers.log_space import from_fit_space, log_scale, to_fit_space
from coderlm.options import OptionError
from coderlm.text.augment import variants
from coderlm.text.bpe import TokenBatch
from coderlm.training.batches import CachedTensors, TokenTensors
from coderlm.training.config import TrainConfig
from coderlm.training.encoder_cache import EncoderCache

log = logging.getLogger("coderlm")


@dataclasses.dataclass(frozen=True)
class Rows:
    """Checked training (or validation) rows: texts, float64 targets (n, k), task labels or None."""

    texts: list[str]
    values: np.ndarray
    tasks: list[str] | None
    skipped: int = 0  # rows dropped by missing="skip" (or "auto")
    missing: str = "error"  # the policy applied; "auto" is resolved to "special" or "skip"

    @property
    def num_objectives(self) -> int:
        return self.values.shape[1]


def check_rows(
    texts: Sequence[str],
    targets,
    tasks: Sequence[str] | None = None,
    *,
    missing: str = "error",
    specials: Sequence[str] = (),
    num_objectives: int | None = None,
    what: str = "",
) -> Rows:
    """Validate texts, targets (n floats, or n lists of k) and tasks; apply ``missing``.
    ``what`` names the rows in errors (``"validation "``)."""
    if missing not in MISSING_POLICIES:
        raise OptionError("missing", f"must be one of {list(MISSING_POLICIES)}, got {missing!r}")
    texts = check_texts(texts)
    nan_ok = missing in ("mask", "skip", "auto")
    values = check_targets(targets, len(texts), num_objectives, specials, allow_nan=nan_ok)
    if tasks is not None and len(tasks) != len(texts):
        raise ValueError(f"got {len(tasks)} {what}task labels for {len(texts)} {what}texts")
    tasks = list(tasks) if tasks is not None else None
    if missing == "auto":
        keep, missing = resolve_auto_missing(values, tasks)
    elif missing == "skip":
        keep = ~np.isnan(values).any(axis=1)
    else:
        return Rows(texts, values, tasks, missing=missing)
    if not keep.any():
        raise ValueError(f"no {what}rows left after skipping {len(texts)} with missing targets")
    pick = np.flatnonzero(keep).tolist()
    tasks = [tasks[i] for i in pick] if tasks else None
    return Rows([texts[i] for i in pick], values[keep], tasks, len(texts) - len(pick), missing)


def augmented(rows: Rows, copies: int, seed: int) -> Rows:
    """``rows`` followed by up to ``copies`` rewrites of each text that keep its behaviour
    (``coderlm.text.augment``: Python source, ONNX texts reordered; other texts get none), each with its
    text's targets and task."""
    if not copies:
        return rows
    texts, source = augmented_texts(rows.texts, copies, seed)
    tasks = [rows.tasks[i] for i in source] if rows.tasks is not None else None
    return Rows(texts, rows.values[source], tasks, rows.skipped, rows.missing)


def augmented_texts(texts: Sequence[str], copies: int, seed: int) -> tuple[list[str], list[int]]:
    """``texts`` followed by up to ``copies`` rewrites of each (see ``augmented``), and for every text
    returned the index of the text it came from."""
    out, source = list(texts), list(range(len(texts)))
    for i, text in enumerate(texts):
        new = variants(text, copies, seed * 1_000_003 + i)
        out += new
        source += [i] * len(new)
    if len(out) == len(texts):
        log.warning("training option augment=%d: no Python or ONNX training text to rewrite; nothing added", copies)
    return out, source


def objective_names(objectives: Sequence[str] | None, k: int, context: Sequence[str] = ()) -> tuple[list, list]:
    """The k objectives' names (default y0..) and whether each is learned (not a ``context`` objective)."""
    names = list(objectives) if objectives is not None else [f"y{j}" for j in range(k)]
    if len(names) != k:
        raise ValueError(f"got {len(names)} objective names for {k} objectives")
    unknown = sorted(set(context) - set(names))
    if unknown or (names and set(context) >= set(names)):
        raise OptionError("context", f"must name some but not all of the objectives {names}, got {list(context)}")
    return names, [name not in context for name in names]


@dataclasses.dataclass(frozen=True)
class TargetTokens:
    """Targets spelled by a codec: token ids (n, k * L) and a loss weight per token (0 = missing)."""

    ids: np.ndarray
    weights: np.ndarray
    overflow: int  # targets clamped to the format's largest magnitude
    underflow: int  # nonzero targets flushed to zero


def encode_targets(
    codec: NumberCodec,
    values: np.ndarray,
    missing: str,
    trained: Sequence[bool] | None = None,
    digit_decay: float = 1.0,
) -> TargetTokens:
    """Spell ``values`` (n, k); with ``missing="mask"``, NaN targets get zero weight, and so do objectives
    whose ``trained`` flag is False (context: teacher-forced, not learned). ``digit_decay`` < 1 weighs
    mantissa digits less the further they are from the first (``NumberFormat.significance``)."""
    present = ~np.isnan(values) if missing == "mask" else np.ones(values.shape, bool)
    if missing == "mask" and not present.any(axis=0).all():
        empty = [j for j in range(values.shape[1]) if not present[:, j].any()]
        raise ValueError(f"objective(s) {empty} have no value in any row")
    encoded = codec.encode(np.where(present, values, 0.0))
    if encoded.overflow or encoded.underflow:
        log.warning(
            "%d target(s) above the format's largest magnitude were clamped to it; "
            "%d nonzero target(s) below its smallest were flushed to zero",
            encoded.overflow,
            encoded.underflow,
        )
    learned = present & (np.asarray(trained, bool)[None, :] if trained is not None else True)
    significance = np.tile(codec.format.significance(digit_decay), values.shape[1])
    weights = (np.repeat(learned, codec.length, axis=1) * significance).astype(np.float32)
    return TargetTokens(encoded.ids, weights, encoded.overflow, encoded.underflow)


def regression_targets(values: np.ndarray, trained: Sequence[bool] | None = None) -> np.ndarray:
    """The auxiliary regression's targets (training option ``aux_regression``): each objective in the
    space a regression baseline fits it in (signed log where it spans decades: ``log_scale``), then
    standardized over its rows; NaN where a value is missing, special (inf) or not learned (context)."""
    values = np.where(np.isfinite(values), values, np.nan)
    out = np.full(values.shape, np.nan)
    for j in range(values.shape[1]):
        if trained is not None and not trained[j]:
            continue
        fitted = to_fit_space(values[:, j], log_scale(values[:, j]))
        present = ~np.isnan(fitted)
        if present.sum() < 2:
            continue
        spread = fitted[present].std()
        out[:, j] = (fitted - fitted[present].mean()) / (spread if spread > 0 else 1.0)
    return out


class TargetJitter:
    """Training targets spelled afresh at every step with Gaussian noise (training option ``target_noise``).

    Cross-entropy on one spelling treats a near miss like a far one, and on a few hundred rows the decoder
    learns each row's exact trailing digits. Spelling ``value + noise * std * z`` (z ~ N(0, 1), drawn per
    row and objective at each step) trains the decoder toward the value's spelling smoothed by a Gaussian,
    in expectation over steps: each digit's target is the probability that the jittered value has that
    digit, so near values share probability, as a regression loss assumes, and digits finer than the noise
    carry no row-specific code. The noise lives in the space the baselines regress in (signed log where an
    objective spans decades, ``log_scale``), scaled by the objective's standard deviation there over the
    training rows; an objective with no negative training value stays non-negative. Special (non-finite),
    missing and context (not learned) targets are spelled exactly. The draws come from torch's generator,
    which checkpoints keep, so a resumed run draws what an uninterrupted one would.
    """

    def __init__(
        self,
        codec: NumberCodec,
        values: np.ndarray,
        noise: float,
        missing: str,
        trained: Sequence[bool] | None = None,
    ) -> None:
        self.codec = codec
        values = np.asarray(values, dtype=np.float64)
        present = ~np.isnan(values) if missing == "mask" else np.ones(values.shape, bool)
        self.values = np.where(present, values, 0.0)
        learned = present & np.isfinite(self.values)
        if trained is not None:
            learned &= np.asarray(trained, bool)[None, :]
        self.scales = np.zeros(values.shape[1])
        self.fitted = np.zeros(values.shape)
        self.sigma = np.zeros(values.shape[1])  # 0: that objective is spelled exactly
        self.floor = np.full(values.shape[1], -np.inf)
        for j in range(values.shape[1]):
            rows = learned[:, j]
            if rows.sum() < 2:
                learned[:, j] = False
                continue
            self.scales[j] = log_scale(self.values[rows, j])
            self.fitted[rows, j] = to_fit_space(self.values[rows, j], self.scales[j])
            self.sigma[j] = noise * self.fitted[rows, j].std()
            if (self.values[rows, j] >= 0).all():
                self.floor[j] = 0.0
        self.learned = learned

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        """Target token ids (len(rows), k * codec.length) of ``rows``, freshly jittered."""
        rows = np.asarray(rows, dtype=np.int64)
        z = torch.randn(len(rows), self.values.shape[1], dtype=torch.float64).numpy()
        jittered = self.fitted[rows] + self.sigma * z
        values = np.empty_like(jittered)
        for j, scale in enumerate(self.scales):
            values[:, j] = from_fit_space(jittered[:, j], scale)
        values = np.where(self.learned[rows], np.maximum(values, self.floor), self.values[rows])
        return self.codec.encode(values).ids


class TensorMaker:
    """``make(tokens, targets)`` -> training tensors on ``device``. With training option ``encoder_cache``
    they hold a frozen pretrained encoder's states, computed once per input (in memory, or on disk in
    ``cache_dir`` / the run folder); ``report`` gets ``encoder_cache: {computed, seconds}``."""

    def __init__(
        self,
        network: EncoderDecoder,
        config: TrainConfig,
        run_dir: Path | None,
        input_len: int,
        device: torch.device,
        report: dict,
    ) -> None:
        self.input_len, self.device, self.report = input_len, device, report
        self.cache = None
        if config.encoder_cache == "off":
            return
        encoder = network.encoder
        if not isinstance(encoder, PretrainedEncoder) or not encoder.frozen:
            raise OptionError(
                "encoder_cache",
                "needs a frozen pretrained encoder (model option encoder=minilm or a folder, train_encoder off)",
            )
        folder = None
        if config.encoder_cache == "disk":
            if not config.cache_dir and run_dir is None:
                raise OptionError("encoder_cache", "'disk' needs cache_dir or a run folder")
            folder = Path(config.cache_dir) if config.cache_dir else run_dir / "encoder_cache"
        self.cache = EncoderCache(encoder.to(device), config.cache_dtype, folder, device=device)
        report.setdefault("encoder_cache", {"computed": 0, "seconds": 0.0})

    def __call__(
        self,
        tokens: TokenBatch,
        targets: TargetTokens,
        aux_values: np.ndarray | None = None,
        jitter: TargetJitter | None = None,
    ) -> TokenTensors:
        if self.cache is None:
            return TokenTensors(tokens, targets.ids, targets.weights, self.device, aux_values, jitter)
        began = time.perf_counter()
        states = self.cache.states(tokens, self.input_len)
        entry = self.report["encoder_cache"]
        entry["computed"] += self.cache.computed
        entry["seconds"] = round(entry["seconds"] + time.perf_counter() - began, 3)
        return CachedTensors(tokens, states, targets.ids, targets.weights, self.device, aux_values, jitter)


def data_report(init, rows: Rows, tokens: TokenBatch, targets: TargetTokens, missing: str) -> dict[str, Any]:
    """A fit report's data part: the init model (fine-tuning), rows, truncated inputs, clamped targets, and the
    mean input tokens (before truncation), per task where rows name several (``input_tokens_by_task``): the
    tasks share one BPE, and a vocabulary too small for all of them shows as one task's inputs growing longer."""
    report: dict[str, Any] = {}
    if init is not None:
        report["init"] = str(init) if isinstance(init, (str, Path)) else "RegressionLM"
    report["examples"] = len(rows.texts)  # rewritten copies (training option augment) included
    if missing == "skip":
        report["skipped"] = rows.skipped
    if missing != rows.missing:  # "auto", resolved
        report["missing"] = {"given": missing, "applied": rows.missing, "skipped": rows.skipped}
    report |= {"truncated": tokens.truncated, "overflow": targets.overflow, "underflow": targets.underflow}
    report["input_tokens"] = round(float(np.mean(tokens.lengths)), 1)
    names = sorted(set(rows.tasks)) if rows.tasks is not None else []
    if len(names) > 1:
        labels = np.asarray(rows.tasks)
        report["input_tokens_by_task"] = {str(t): round(float(np.mean(tokens.lengths[labels == t])), 1) for t in names}
    return report
