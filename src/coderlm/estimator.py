"""``RegressionLM``: fit on (text, numbers) pairs, sample numbers with uncertainty.

Follows scikit-learn's conventions: ``__init__`` only stores its arguments,
``fit`` returns ``self``, learned state ends in ``_``.

    >>> rlm = RegressionLM(training={"steps": 300}).fit(texts, targets)
    >>> rlm.predict(new_texts)                  # (n, k) medians of 64 samples
    >>> rlm.predict_interval(new_texts, 0.9)    # (n, k, 2)
    >>> rlm.save("run/"); RegressionLM.load("run/")

``fit`` is a pipeline over the library's parts: rows are checked and their targets spelled
(``training.examples``), the tokenizer and network are built (``model.build``), tensors made,
validation chosen (``training.validation``), and the ``training.Trainer`` runs.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from coderlm import __version__
from coderlm.data.checks import check_targets, check_texts
from coderlm.decoding.estimates import central_interval, point_estimate, quantiles
from coderlm.decoding.sampler import allowed_log_probs, sample_tokens
from coderlm.devices import resolve_device
from coderlm.model.build import build_network, build_tokenizer, model_config
from coderlm.model.config import size_options
from coderlm.model.files import (
    CONFIG_FILE,
    TOKENIZER_FILE,
    network_record,
    read_network,
    read_record,
    read_tokenizer,
    save_tokenizer,
    write_model,
)
from coderlm.model.hf_encoder import SCRATCH
from coderlm.model.transfer import check_same_number_tokens, finetune_config
from coderlm.model.transformer import EncoderDecoder
from coderlm.numbers.codec import NumberCodec
from coderlm.numbers.formats import P10, NumberFormat, format_from_dict
from coderlm.text import TokenBatch, load_tokenizer
from coderlm.training.batches import length_sorted_batches
from coderlm.training.config import TrainConfig
from coderlm.training.examples import Rows, TensorMaker, check_rows, encode_targets
from coderlm.training.objective import LossOf
from coderlm.training.sampling import BatchSampler
from coderlm.training.trainer import Trainer, TrainResult
from coderlm.training.validation import likelihood_validation, ranking_validation

log = logging.getLogger("coderlm")

FINETUNE_LEARNING_RATE = 5e-5  # the paper's fine-tuning rate; used with init= unless training sets one


class RegressionLM:
    """An encoder-decoder that reads text and writes numbers digit by digit.

    Args:
        number_format: how each number is spelled (default ``P10()``: sign,
            exponent, 4 mantissa digits, exponents -10..10); or ``IEEE(...)``.
        specials: special values to learn as tokens, from ``("nan", "+inf",
            "-inf", "invalid")``; without them non-finite targets are an error.
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
    ) -> RegressionLM:
        """Learn the input vocabulary and the model. targets: n floats, or n lists of k floats.

        Args:
            missing: what a missing (None/NaN) target means: ``"error"`` (default, unless ``specials`` has
                ``"nan"``), ``"skip"`` (drop the row), ``"mask"`` (leave that objective out of the loss)
                or ``"special"`` (learn it as the ``<NaN>`` token).
            tasks: a task name per text, for temperature-scaled task sampling.
            objectives: names of the k objectives, kept with the model.
            val_texts, val_targets: validation set for the loss curve and early stopping. With
                training option ``val_metric="spearman"`` validation scores ranking instead of
                likelihood: 1 - Spearman of the median of ``val_samples`` samples, within each
                of ``val_tasks`` (a task per validation text) and averaged over objectives.
            run_dir: folder for metrics.jsonl, checkpoints and the final model.
            resume: continue the run in ``run_dir`` from its latest checkpoint.
            init: fine-tune: start from this trained model (a saved model or run folder,
                or a fitted ``RegressionLM``) instead of from scratch. Its input tokenizer
                and architecture are kept (``model`` options may only repeat them, or set
                ``dropout``); the objectives may be new, and more or fewer. The number
                format and specials default to the init model's and must spell numbers
                with the same tokens. The learning rate defaults to 5e-5 (the paper's
                fine-tuning rate) unless ``training`` sets ``learning_rate``.
        """
        base = self._init_model(init) if init is not None else None
        specials = self._specials(base, missing)
        rows = check_rows(texts, targets, tasks, missing=missing, specials=specials)
        names = _objective_names(objectives, rows.num_objectives)
        options = size_options(self.model, type(self).__name__)
        config = TrainConfig.from_dict(dict(self.training or {}) | self._finetune_defaults(base))
        run_dir = Path(run_dir) if run_dir is not None else None
        if resume and run_dir is None:
            raise ValueError("resume=True needs run_dir")
        codec = self._codec(rows.num_objectives, specials, base)
        target_tokens = encode_targets(codec, rows.values, missing)
        tokenizer = self._tokenizer(rows.texts, options, base, run_dir if resume else None)
        network_config = (
            finetune_config(base.network_.cfg, codec.total_length, options)
            if base is not None
            else model_config(
                tokenizer,
                self.max_input_len,
                options,
                output_vocab_size=codec.vocab_size,
                output_length=codec.total_length,
            )
        )
        input_len = min(self.max_input_len, network_config.max_input_len)
        tokens = self._tokenize(tokenizer, rows.texts, input_len)
        self.network_ = build_network(
            network_config,
            config.seed,
            encoder_config=base.network_.encoder_config if base is not None else None,
            init_state=base.network_.state_dict() if base is not None else None,
            number_length=codec.length,
        )
        self.codec_, self.tokenizer_, self.objectives_ = codec, tokenizer, names
        self.fit_report_ = {
            **({"init": str(init) if isinstance(init, (str, Path)) else "RegressionLM"} if base is not None else {}),
            "examples": len(rows.texts),
            **({"skipped": rows.skipped} if missing == "skip" else {}),
            "truncated": tokens.truncated,
            "overflow": target_tokens.overflow,
            "underflow": target_tokens.underflow,
        }
        if run_dir is not None:
            save_tokenizer(run_dir, tokenizer)  # before any weights: a resume needs it
        device = torch.device(self._device())
        make_tensors = TensorMaker(self.network_, config, run_dir, input_len, device, self.fit_report_)
        data = make_tensors(tokens, target_tokens)
        val_loss = None
        if val_texts is not None:
            val = check_rows(
                val_texts,
                val_targets,
                val_tasks,
                missing=missing,
                specials=specials,
                num_objectives=rows.num_objectives,
                what="validation ",
            )
            val_loss = self._validation(val, config, make_tensors, input_len, missing)
        sampler = BatchSampler.for_config(len(rows.texts), config, rows.tasks, tokens.mask.sum(1))
        trainer = Trainer(
            LossOf(self.network_), config, sampler, data.batch, val_loss=val_loss, run_dir=run_dir, device=device
        )
        result = trainer.run(resume=resume)
        self.network_.eval()
        self.loss_history_ = result.losses
        self.fit_report_ |= _training_report(result, config.val_metric if val_texts is not None else None)
        if run_dir is not None:
            self._write_files(run_dir)
        return self

    def _specials(self, base: RegressionLM | None, missing: str) -> tuple[str, ...]:
        """The special values to learn: as given, else the init model's; ``missing="special"`` adds ``nan``."""
        specials = tuple(self.specials) or (base.codec_.specials if base is not None else ())
        return specials + (("nan",) if missing == "special" and "nan" not in specials else ())

    def _finetune_defaults(self, base: RegressionLM | None) -> dict[str, Any]:
        if base is None or "learning_rate" in (self.training or {}):
            return {}
        return {"learning_rate": FINETUNE_LEARNING_RATE}

    def _codec(self, k: int, specials: tuple[str, ...], base: RegressionLM | None) -> NumberCodec:
        number_format = self.number_format or (base.codec_.format if base is not None else P10())
        codec = NumberCodec(number_format, k, specials)
        if base is not None:
            check_same_number_tokens(codec, base.codec_)
        return codec

    def _tokenizer(self, texts: list[str], options: dict, base: RegressionLM | None, resume_from: Path | None):
        """The init model's tokenizer (fine-tuning), the run folder's (resume), or a new one."""
        if base is not None:
            return base.tokenizer_
        if resume_from is not None and (resume_from / TOKENIZER_FILE).is_file():
            return load_tokenizer(resume_from / TOKENIZER_FILE)
        return build_tokenizer(
            texts,
            options.get("encoder", SCRATCH),
            vocab_size=self.vocab_size,
            pretokenize=self.pretokenize,
            layout_markers=self.layout_markers,
        )

    def _validation(self, val: Rows, config: TrainConfig, make_tensors: TensorMaker, input_len: int, missing: str):
        """What validation minimizes (``val_metric``): the likelihood of the targets, or 1 - rank correlation."""
        if config.val_metric == "spearman":
            tokens = self._encode(val.texts)  # once: every evaluation reads the same inputs
            samples = lambda: self.codec_.decode(self._sample_ids(tokens, config.val_samples, None, 0))  # noqa: E731
            return ranking_validation(samples, val.values, val.tasks)
        tokens = self.tokenizer_.encode(val.texts, input_len)
        return likelihood_validation(make_tensors(tokens, encode_targets(self.codec_, val.values, missing)))

    # ------------------------------------------------------------- predict
    def sample(
        self,
        texts: Sequence[str],
        num_samples: int | None = None,
        temperature: float | None = None,
        seed: int | None = None,
    ) -> np.ndarray:
        """Float64 samples (n, num_samples, k); NaN/±inf only for declared special values."""
        ids = self.sample_tokens(texts, num_samples, temperature, seed)
        return self.codec_.decode(ids)

    def sample_tokens(
        self,
        texts: Sequence[str],
        num_samples: int | None = None,
        temperature: float | None = None,
        seed: int | None = None,
    ) -> np.ndarray:
        """Number token ids (n, num_samples, k * L) as sampled, before decoding to floats."""
        self._check_fitted()
        return self._sample_ids(self._encode(check_texts(texts)), num_samples, temperature, seed)

    def _sample_ids(
        self, tokens: TokenBatch, num_samples: int | None, temperature: float | None, seed: int | None
    ) -> np.ndarray:
        num_samples = self.num_samples if num_samples is None else num_samples
        temperature = self.temperature if temperature is None else temperature
        generator = None
        if seed is not None:
            generator = torch.Generator(device=self._device()).manual_seed(seed)
        out = np.empty((len(tokens.lengths), num_samples, self.codec_.total_length), dtype=np.int64)
        automaton = self._automaton()
        for rows, batch in self._batches(tokens):
            ids = sample_tokens(self.network_, automaton, *batch, num_samples, temperature, generator)
            out[rows] = ids.cpu().numpy()
        return out

    def predict(self, texts: Sequence[str], point: str = "median", num_samples: int | None = None) -> np.ndarray:
        """Point estimates (n, k): the median (default) or mean of the samples."""
        return point_estimate(self.sample(texts, num_samples), point)

    def predict_quantiles(self, texts: Sequence[str], q: Sequence[float]) -> np.ndarray:
        """Sample quantiles (n, k, len(q))."""
        return quantiles(self.sample(texts), np.asarray(q, dtype=np.float64))

    def predict_interval(self, texts: Sequence[str], level: float = 0.9) -> np.ndarray:
        """Central intervals (n, k, 2) holding ``level`` of the predictive samples."""
        return central_interval(self.sample(texts), level)

    @torch.no_grad()
    def log_prob(self, texts: Sequence[str], targets, per_objective: bool = False) -> np.ndarray:
        """Log-probability of each target's token spelling: (n,), or (n, k) per objective.

        This is the probability of the rounded number (its last-digit bin), under
        the same renormalized distribution the sampler draws from.
        """
        self._check_fitted()
        texts = check_texts(texts)
        values = check_targets(targets, len(texts), self.codec_.num_objectives, self.codec_.specials)
        target_ids = torch.from_numpy(self.codec_.encode(values).ids)
        automaton = self._automaton()
        out = np.empty((len(texts), self.codec_.num_objectives))
        for rows, (ids, mask) in self._batches(self._encode(texts)):
            y = target_ids[rows].to(ids.device)
            logp = allowed_log_probs(self.network_(ids, mask, y), automaton, y)  # (b, L)
            out[rows] = logp.view(len(rows), self.codec_.num_objectives, -1).sum(-1).cpu().numpy()
        return out if per_objective else out.sum(1)

    # --------------------------------------------------------- persistence
    def save(self, path: str | Path) -> Path:
        """Write config.json, model.safetensors and tokenizer.json into folder ``path`` (``model.files``).

        Other files in the folder (a run's metrics, checkpoints) are kept.
        """
        self._check_fitted()
        return self._write_files(Path(path))

    def _write_files(self, path: Path) -> Path:
        save_tokenizer(path, self.tokenizer_)
        record = {
            "coderlm_version": __version__,
            "kind": type(self).__name__,
            "params": self._params_dict(),
            "objectives": self.objectives_,
            **network_record(self.network_),
            "codec": self.codec_.to_dict(),
            "fit_report": self.fit_report_,
        }
        return write_model(path, self.network_, record)

    @classmethod
    def load(cls, path: str | Path, device: str = "cpu") -> RegressionLM:
        """Load a model written by ``save``; errors name the missing or bad file."""
        path = Path(path)
        record = read_record(path, cls.__name__)
        try:
            params = dict(record["params"])
            if params.get("number_format") is not None:
                params["number_format"] = format_from_dict(params["number_format"])
            params["specials"] = tuple(params.get("specials", ()))
            rlm = cls(**params | {"device": device})
            rlm.codec_ = NumberCodec.from_dict(record["codec"])
            rlm.fit_report_ = record.get("fit_report", {})
            rlm.objectives_ = list(record["objectives"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path / CONFIG_FILE}: {exc}") from exc
        rlm.network_ = read_network(path, record, rlm._device())
        rlm.tokenizer_ = read_tokenizer(path)
        return rlm

    @property
    def model_(self) -> EncoderDecoder:
        """Older name of ``network_`` (the fitted network; ``model`` holds its options)."""
        return self.network_

    # ------------------------------------------------------------- helpers
    @classmethod
    def _init_model(cls, init: str | Path | RegressionLM) -> RegressionLM:
        """The fitted model to fine-tune from: ``init`` itself, or loaded from its folder."""
        if isinstance(init, RegressionLM):
            init._check_fitted()
            return init
        if not isinstance(init, (str, Path)):
            raise ValueError(f"init must be a saved model folder or a fitted RegressionLM, got {type(init).__name__}")
        if not (Path(init) / CONFIG_FILE).is_file():
            raise FileNotFoundError(
                f"init={str(init)!r} holds no trained model ({CONFIG_FILE} is missing; "
                "a run folder has one once its training has finished)"
            )
        return cls.load(init)

    def get_params(self) -> dict[str, Any]:
        """The constructor's arguments, as stored (scikit-learn's convention)."""
        return {name: getattr(self, name) for name in _constructor_params(type(self))}

    def _params_dict(self) -> dict[str, Any]:
        """``get_params`` as JSON, without the device (chosen again on load)."""
        params = self.get_params()
        del params["device"]
        number_format = params["number_format"]
        return params | {
            "number_format": number_format.to_dict() if number_format is not None else None,
            "specials": list(params["specials"]),
        }

    def _check_fitted(self) -> None:
        if not hasattr(self, "network_"):
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet: call fit() or load() first")

    def _device(self) -> str:
        return resolve_device(self.device)

    def _automaton(self):
        return self.codec_.automaton.to(self._device())

    def _tokenize(self, tokenizer, texts: list[str], input_len: int) -> TokenBatch:
        """Input token ids as a model with context ``input_len`` reads them; truncation is reported."""
        tokens = tokenizer.encode(texts, input_len)
        if tokens.truncated:
            log.warning(
                "%d of %d text(s) exceed max_input_len=%d tokens and were truncated (longest: %d)",
                tokens.truncated,
                len(tokens.lengths),
                input_len,
                int(tokens.lengths.max()),
            )
        return tokens

    def _encode(self, texts: list[str]) -> TokenBatch:
        """Input token ids as this model reads them: ``max_input_len``, capped by the network's context."""
        return self._tokenize(self.tokenizer_, texts, min(self.max_input_len, self.network_.cfg.max_input_len))

    def _batches(self, tokens: TokenBatch) -> Iterator[tuple[np.ndarray, tuple[torch.Tensor, torch.Tensor]]]:
        """Batches of similar length (less padding); yields the original row indices with them."""
        kept = tokens.mask.sum(1)
        self.network_.eval()
        for rows in length_sorted_batches(kept, self.batch_size):
            width = int(kept[rows].max())
            ids = torch.from_numpy(tokens.ids[rows, :width]).to(self._device())
            mask = torch.from_numpy(tokens.mask[rows, :width]).to(self._device())
            yield rows, (ids, mask)


def _constructor_params(cls: type) -> list[str]:
    return [name for name in inspect.signature(cls.__init__).parameters if name != "self"]


def _objective_names(objectives: Sequence[str] | None, k: int) -> list[str]:
    names = list(objectives) if objectives is not None else [f"y{j}" for j in range(k)]
    if len(names) != k:
        raise ValueError(f"got {len(names)} objective names for {k} objectives")
    return names


def _training_report(result: TrainResult, val_metric: str | None) -> dict[str, Any]:
    return {
        "steps": result.step,
        "train_seconds": round(result.seconds, 3),
        "val_metric": val_metric,
        "best_val_loss": result.best_val_loss,
        # the weights kept are best_step's; None when no validation ran or (resumed) it came before
        "best_step": next((step for step, loss in result.val_losses if loss == result.best_val_loss), None),
        "kept_steps": result.kept_steps,  # the weights returned (averaged with average_best > 1), best first
        "val_losses": [[step, loss] for step, loss in result.val_losses],
        "stopped_early": result.stopped_early,
    }
