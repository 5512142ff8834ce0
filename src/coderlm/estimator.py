"""``RegressionLM``: fit on (text, numbers) pairs, sample numbers with uncertainty.

Follows scikit-learn's conventions: ``__init__`` only stores its arguments,
``fit`` returns ``self``, learned state ends in ``_``.

    >>> rlm = RegressionLM(training={"steps": 300}).fit(texts, targets)
    >>> rlm.predict(new_texts)                  # (n, k) medians of 64 samples
    >>> rlm.predict_interval(new_texts, 0.9)    # (n, k, 2)
    >>> rlm.save("run/"); RegressionLM.load("run/")

``fit`` is a pipeline over the library's parts: rows are checked and their targets spelled (``training.examples``),
the tokenizer and network built (``model.build``), validation chosen (``training.validation``), the trainer run.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from coderlm.builtin import model_folder
from coderlm.data.checks import check_targets, check_texts
from coderlm.decoding.calibration import Calibration, calibrate, combine
from coderlm.decoding.estimates import central_interval, point_estimate, quantiles
from coderlm.decoding.sampler import inputs_log_probs, sample_inputs
from coderlm.decoding.walk import walk_inputs
from coderlm.devices import resolve_device
from coderlm.estimator_files import constructor_params, init_estimator, read_estimator, run_folder, write_estimator
from coderlm.model.build import finetuned_network, fit_codec, fit_tokenizer, new_network
from coderlm.model.config import size_options
from coderlm.model.files import save_tokenizer
from coderlm.model.hf_encoder import is_encoder_folder
from coderlm.model.transfer import init_context, transfer_sources
from coderlm.numbers.codec import NumberCodec
from coderlm.numbers.formats import NumberFormat
from coderlm.options import OptionError
from coderlm.readout import Readout, add_readout
from coderlm.text import TokenBatch
from coderlm.training.examples import (
    TargetJitter,
    TensorMaker,
    augmented,
    check_rows,
    data_report,
    encode_targets,
    objective_names,
    regression_targets,
)
from coderlm.training.objective import NumberLoss
from coderlm.training.sampling import BatchSampler
from coderlm.training.start_rate import start_config
from coderlm.training.trainer import Trainer
from coderlm.training.validation import model_validation

log = logging.getLogger("coderlm")


class RegressionLM:
    """An encoder-decoder that reads text and writes numbers digit by digit.

    Args:
        number_format: how each number is spelled (default ``P10()``: sign,
            exponent, 4 mantissa digits, exponents -10..10); or ``IEEE(...)``.
        specials: special values to learn as tokens, from ``("nan", "+inf",
            "-inf", "invalid")``; without them non-finite targets are an error.
        target_scale: how targets are spelled: auto (the default: by their rank among the training targets
            where most share their leading digits, as they are elsewhere), raw, quantile (every objective
            by rank) or linear (every objective's training range onto one decade, in proportion):
            numbers/target_scale.py; fine-tuning a model spelled raw keeps raw unless set
        vocab_size: size of the input BPE vocabulary learned in fit
        pretokenize: where the learned BPE's merges stop: code (words, punctuation, single digits) or lines
            (only line ends; far shorter for machine-written text such as ONNX graphs)
        layout_markers: a pretrained encoder's tokenizer: auto (newline/indent markers if it drops layout),
            always or never (docs/encoders.md)
        max_input_len: encoder context in tokens; longer inputs are truncated (and counted)
        model: model options, e.g. ``{"encoder_layers": 4}``, or a pretrained encoder
            ``{"encoder": "minilm"}`` / a local Hugging Face folder (see ``ModelConfig``).
        training: training options, e.g. ``{"steps": 2000}``, ``{"encoder_cache": "memory"}``
            (see ``TrainConfig``).
        num_samples: samples per input for predictions and intervals
        temperature: sampling temperature; 0 decodes greedily
        batch_size: inputs per forward pass when predicting
        device: torch device: cpu, cuda or auto

    ``pretokenize="structure"`` / ``"plain"`` are older names of ``layout_markers="always"`` / ``"never"``.
    """

    def __init__(
        self,
        number_format: NumberFormat | None = None,
        *,
        specials: Sequence[str] = (),
        target_scale: str | None = None,
        vocab_size: int = 4096,
        pretokenize: str = "code",
        layout_markers: str = "auto",
        max_input_len: int = 512,
        model: dict | None = None,
        training: dict | None = None,
        num_samples: int = 64,
        temperature: float = 1.0,
        batch_size: int = 16,
        device: str = "cpu",
    ) -> None:
        self.number_format = number_format
        self.specials = specials
        self.target_scale = target_scale
        self.vocab_size = vocab_size
        self.pretokenize = pretokenize
        self.layout_markers = layout_markers
        self.max_input_len = max_input_len
        self.model = model
        self.training = training
        self.num_samples = num_samples
        self.temperature = temperature
        self.batch_size = batch_size
        self.device = device

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        texts: Sequence[str],
        targets,
        *,
        missing: str = "error",
        tasks: Sequence[str] | None = None,
        objectives: Sequence[str] | None = None,
        val_texts: Sequence[str] | None = None,
        val_targets=None,
        val_tasks: Sequence[str] | None = None,
        run_dir: str | Path | None = None,
        resume: bool = False,
        init: str | Path | RegressionLM | None = None,
        context: Sequence[str] | str = (),
    ) -> RegressionLM:
        """Learn the input vocabulary and the model. targets: n floats, or n lists of k floats.

        Args:
            missing: what a missing (None/NaN) target means: ``"error"`` (unless ``specials`` has ``"nan"``),
                ``"skip"`` the row, ``"mask"`` it out of the loss, learn it as a ``"special"`` token, or ``"auto"``:
                special where the row's task never has that objective (with ``tasks``), else skip the row.
            tasks: a task name per text, for task sampling (and ranking validation within tasks).
            objectives: names of the k objectives, kept with the model.
            val_texts, val_targets, val_tasks: validation set for the loss curve, early stopping and the
                weights kept: by likelihood, or with ``val_metric="spearman"`` by within-task ranking.
            run_dir: folder for metrics.jsonl, checkpoints and the final model; ``resume`` continues it.
            init: fine-tune from this trained model (a saved model, run folder or fitted ``RegressionLM``):
                its tokenizer, architecture (``model`` may set ``dropout``), number format and specials
                are kept; the objectives may be new; the learning rate defaults to 5e-5. Or start from a
                pretrained encoder (``coderlm pretrain``'s folder, ``builtin:python-encoder``, any Hugging Face
                encoder folder): its tokenizer and trained encoder under a new number decoder
                (``model={"encoder": folder, "train_encoder": True}``; the learning rate defaults to 3e-4;
                set ``train_encoder=False`` to keep it frozen, the decoder then trains at the usual 1e-3).
            context: objectives given as context only: the later ones are conditioned on their values, which are
                not learned (transfer to a new objective, given the init model's own predictions of the others).
                ``"init"`` (with ``init``): the init model's objectives, filled with its own predictions for
                these texts, come first as context; the model then writes them and then the new objectives,
                each new one starting from the init objective that ranks its targets best (``fit_report_
                ["transfer"]``): a new device starts as the known device most like it.
        """
        options = size_options(self.model, type(self).__name__)
        if init is not None and not isinstance(init, RegressionLM) and is_encoder_folder(model_folder(init)):
            options = {"encoder": str(model_folder(init)), "train_encoder": True} | options  # a pretrained encoder
            init = None
        base = init_estimator(type(self), init) if init is not None else None
        if isinstance(context, str):  # "init": the init model's own predictions, as context
            targets, objectives, val_targets, context = init_context(
                context, base, texts, targets, objectives, val_texts, val_targets
            )
        rows = check_rows(texts, targets, tasks, missing=missing, specials=self._specials(base, missing))
        given, missing = missing, rows.missing  # "auto" resolved to "special" or "skip"
        specials = self._specials(base, missing)
        names, trained = objective_names(objectives, rows.num_objectives, context)
        sources, transfer = (None, {})
        if base is not None:
            sources, transfer = transfer_sources(base.decoded_objectives_, names, rows.values)
        config, kind = start_config(self.training, base is not None, options, rows.texts)
        run_dir = run_folder(run_dir, resume)
        base_codec, base_tokenizer = (base.codec_, base.tokenizer_) if base is not None else (None, None)
        codec = fit_codec(rows.num_objectives, specials, rows.values, self.number_format, self.target_scale, base_codec)
        bpe = {"vocab_size": self.vocab_size, "pretokenize": self.pretokenize, "layout_markers": self.layout_markers}
        tokenizer = fit_tokenizer(rows.texts, options, base_tokenizer, run_dir if resume else None, **bpe)
        rows = augmented(rows, config.augment, config.seed)  # after the BPE: it is learned on the texts as given
        target_tokens = encode_targets(codec, rows.values, missing, trained, config.digit_decay)
        self.network_ = self._network(tokenizer, codec, options, base, config.seed, sources)
        if not all(trained) and self.network_.cfg.independent_objectives:
            raise OptionError(
                "context",
                "conditions the later objectives on the context ones, which independent_objectives=True cuts "
                "(each objective is written from the input alone); set it False",
            )
        self.codec_, self.tokenizer_, self.objectives_, self.calibration_ = codec, tokenizer, names, None
        self.readouts_ = []
        tokens = self._encode(rows.texts)
        self.fit_report_ = data_report(init if base is not None else None, rows, tokens, target_tokens, given)
        if transfer:
            self.fit_report_["transfer"] = transfer
        if run_dir is not None:
            save_tokenizer(run_dir, tokenizer)  # before any weights: a resume needs it
        device = torch.device(self._device())
        make_tensors = TensorMaker(self.network_, config, run_dir, self._input_len(), device, self.fit_report_)
        val_loss = model_validation(
            self, val_texts, val_targets, val_tasks, missing, specials, config, make_tensors, trained
        )
        sampler = BatchSampler.for_config(len(rows.texts), config, rows.tasks, tokens.mask.sum(1))
        groups = [codec.format.token_ids(group) for group in codec.format.ordinal_groups()]  # format tokens first
        k, aux = rows.num_objectives, config.aux_regression
        objective = NumberLoss(self.network_, groups, config.ordinal_loss, aux, k)
        jitter = (
            TargetJitter(codec, rows.values, config.target_noise, missing, trained) if config.target_noise else None
        )
        data = make_tensors(tokens, target_tokens, regression_targets(rows.values, trained) if aux else None, jitter)
        trainer = Trainer(objective, config, sampler, data.batch, val_loss=val_loss, run_dir=run_dir, device=device)
        result = trainer.run(resume=resume)
        self.network_.eval()
        self.loss_history_ = result.losses
        self.fit_report_ |= result.report(config.val_metric if val_loss is not None else None)
        self.fit_report_["learning_rate"] = config.learning_rate  # the peak rate, set or defaulted by the start
        self.fit_report_["target_noise"] = config.target_noise
        self.fit_report_["ema_decay"] = config.ema_decay
        self.fit_report_["augment"] = config.augment
        self.fit_report_["text_kind"] = kind  # coderlm.text.kind: the start's rate depends on it
        result.warn_if_still_improving()
        if run_dir is not None:
            self._write_files(run_dir)
        return self

    def _specials(self, base: RegressionLM | None, missing: str) -> tuple[str, ...]:
        """The special values to learn: as given, else the init model's; ``missing="special"`` adds ``nan``."""
        specials = tuple(self.specials) or (base.codec_.specials if base is not None else ())
        return specials + (("nan",) if missing == "special" and "nan" not in specials else ())

    def _network(self, tokenizer, codec: NumberCodec, options: dict, base: RegressionLM | None, seed: int, sources):
        if base is None:
            return new_network(tokenizer, codec, options, self.max_input_len, seed)
        return finetuned_network(base.network_, codec, options, seed, sources)

    # ------------------------------------------------------------- predict
    def sample(
        self,
        texts: Sequence[str],
        num_samples: int | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        progress: bool = False,
    ) -> np.ndarray:
        """Float64 samples (n, num_samples, k); NaN/±inf only for declared special values. Readout objectives
        (``fit_readout``) come last, each computed from the same sample's decoded objectives. ``progress``: a
        bar on stderr counting the inputs sampled."""
        ids = self.sample_tokens(texts, num_samples, temperature, seed, progress)  # checks the model is fitted
        values = self.codec_.decode(ids)
        return self._with_readouts(values)

    def fit_readout(
        self,
        texts: Sequence[str],
        targets,
        objective: str,
        inputs: Sequence[str] | None = None,
        seed: int | None = 0,
        nearest: bool = False,
        calibrate: bool = False,
    ) -> Readout:
        """Add ``objective`` as a readout (``coderlm.readout``): a ridge regression, fitted on measured ``texts``
        and ``targets`` (n floats), over the model's predictions of its objectives ``inputs`` (default: all);
        ``nearest``: of the one input whose predictions rank the targets best; ``calibrate``: its intervals
        calibrated on the same rows, each left out. ``predict`` and ``sample`` write it last; one so named goes."""
        self._check_fitted()
        return add_readout(self, texts, targets, objective, inputs, seed, nearest, calibrate)

    def sample_tokens(
        self,
        texts: Sequence[str],
        num_samples: int | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        progress: bool = False,
    ) -> np.ndarray:
        """Number token ids (n, num_samples, k * L) as sampled, before decoding to floats."""
        self._check_fitted()
        return self._sample_ids(self._encode(check_texts(texts)), num_samples, temperature, seed, progress)

    def _sample_ids(self, tokens: TokenBatch, num_samples, temperature, seed, progress: bool = False) -> np.ndarray:
        """``sample_tokens`` of texts already encoded (validation encodes once and samples at every evaluation)."""
        generator = None if seed is None else torch.Generator(device=self._device()).manual_seed(seed)
        num_samples = self.num_samples if num_samples is None else num_samples
        temperature = self.temperature if temperature is None else temperature
        self.network_.eval()
        automaton, batch = self._automaton(), self.batch_size
        return sample_inputs(self.network_, automaton, tokens, num_samples, temperature, generator, batch, progress)

    def predict(self, texts: Sequence[str], point: str = "median", num_samples: int | None = None) -> np.ndarray:
        """Point estimates (n, k): the median (default), mean or trimmed mean (interquartile) of the samples,
        or ``"exact"``: the median of the model's distribution itself (``predict_quantiles(exact=True)``)."""
        if point == "exact":
            return self.predict_quantiles(texts, [0.5], exact=True)[..., 0]
        return point_estimate(self.sample(texts, num_samples), point)

    def predict_quantiles(
        self, texts: Sequence[str], q: Sequence[float], exact: bool = False, progress: bool = False
    ) -> np.ndarray:
        """Quantiles (n, k, len(q)) of the samples; ``exact``: of the model's distribution itself, one
        deterministic decode per level (``coderlm.decoding.walk``), continuous within the last digit."""
        if not exact:
            return quantiles(self.sample(texts, progress=progress), np.asarray(q, dtype=np.float64))
        self._check_fitted()
        self.network_.eval()
        tokens, levels, automaton = self._encode(check_texts(texts)), np.asarray(q, np.float64), self._automaton()
        values = walk_inputs(self.network_, automaton, self.codec_, tokens, levels, self.batch_size, progress)
        return np.moveaxis(self._with_readouts(values), 1, -1)

    def predict_interval(self, texts: Sequence[str], level: float = 0.9, calibrated: bool = True) -> np.ndarray:
        """Central intervals (n, k, 2) holding ``level`` of the samples; widened by the model's conformal
        calibration when it has one (``calibrate``), so that they cover ``level`` of new values."""
        samples = self.sample(texts)
        calibration = getattr(self, "calibration_", None) if calibrated else None
        return calibration.interval(samples, level) if calibration else central_interval(samples, level)

    def calibrate(self, texts: Sequence[str], targets, seed: int | None = 0) -> Calibration:
        """Split-conformal calibration on held-out rows (``decoding.calibration``), kept as ``calibration_``
        (and saved with the model); an objective these rows have no value for keeps its earlier scores."""
        self._check_fitted()
        values = check_targets(targets, len(check_texts(texts)), len(self.objectives_), (), allow_nan=True)
        fresh, names = calibrate(self.sample(texts, seed=seed), values), list(self.objectives_)
        self.calibration_ = combine([(getattr(self, "calibration_", None), names), (fresh, names)], names)
        return self.calibration_

    def log_prob(self, texts: Sequence[str], targets, per_objective: bool = False) -> np.ndarray:
        """Log-probability of each target's token spelling: (n,), or (n, k) per objective.

        This is the probability of the rounded number (its last-digit bin), under
        the same renormalized distribution the sampler draws from.
        """
        self._check_fitted()
        texts = check_texts(texts)
        values = check_targets(targets, len(texts), self.codec_.num_objectives, self.codec_.specials)
        target_ids = torch.from_numpy(self.codec_.encode(values).ids)
        self.network_.eval()
        k, automaton = self.codec_.num_objectives, self._automaton()
        out = inputs_log_probs(self.network_, automaton, self._encode(texts), target_ids, k, self.batch_size)
        return out if per_objective else out.sum(1)

    # --------------------------------------------------------- persistence
    def save(self, path: str | Path) -> Path:
        """Write config.json, model.safetensors and tokenizer.json into folder ``path`` (``model.files``).

        Other files in the folder (a run's metrics, checkpoints) are kept.
        """
        self._check_fitted()
        return self._write_files(Path(path))

    def _write_files(self, path: Path) -> Path:
        return write_estimator(self, path)

    @classmethod
    def load(cls, path: str | Path, device: str = "cpu") -> RegressionLM:
        """Load a model written by ``save`` (or ``builtin:<name>``); errors name the missing or bad file."""
        return read_estimator(cls, path, device)

    model_ = property(lambda self: self.network_, doc="Older name of ``network_`` (``model`` holds its options).")
    decoded_objectives_ = property(
        lambda self: self.objectives_[: self.codec_.num_objectives],
        doc="The objectives the network writes (``objectives_`` less the readouts, which follow them).",
    )

    # ------------------------------------------------------------- helpers
    def get_params(self) -> dict[str, Any]:
        """The constructor's arguments, as stored (scikit-learn's convention)."""
        return {name: getattr(self, name) for name in constructor_params(type(self))}

    def _check_fitted(self) -> None:
        if not hasattr(self, "network_"):
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet: call fit() or load() first")

    def _with_readouts(self, values: np.ndarray) -> np.ndarray:
        """Decoded values (..., k) with each readout objective (``fit_readout``) appended, computed from them."""
        return np.concatenate([values, *(r.apply(values)[..., None] for r in self.readouts_)], axis=-1)

    def _device(self) -> str:
        return resolve_device(self.device)

    def _automaton(self):
        return self.codec_.automaton.to(self._device())

    def _input_len(self) -> int:
        """Tokens read per input: ``max_input_len``, capped by the network's context (fine-tuning keeps init's)."""
        return min(self.max_input_len, self.network_.cfg.max_input_len)

    def _encode(self, texts: list[str]) -> TokenBatch:
        """Input token ids as this model reads them; truncation is reported."""
        input_len = self._input_len()
        tokens = self.tokenizer_.encode(texts, input_len)
        if tokens.truncated:
            message = "%d of %d text(s) exceed max_input_len=%d tokens and were truncated (longest: %d)"
            log.warning(message, tokens.truncated, len(tokens.lengths), input_len, int(tokens.lengths.max()))
        return tokens
