"""``RegressionLM``: fit on (text, numbers) pairs, sample numbers with uncertainty.

Follows scikit-learn's conventions: ``__init__`` only stores its arguments,
``fit`` returns ``self``, learned state ends in ``_``.

    >>> rlm = RegressionLM(training={"steps": 300}).fit(texts, targets)
    >>> rlm.predict(new_texts)                  # (n, k) medians of 64 samples
    >>> rlm.predict_interval(new_texts, 0.9)    # (n, k, 2)
    >>> rlm.save("run/"); RegressionLM.load("run/")
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file
from safetensors.torch import save as safetensors_bytes

from coderlm import __version__
from coderlm.atomic import write_atomic
from coderlm.data.checks import check_targets, check_texts
from coderlm.decoding.estimates import central_interval, point_estimate, quantiles
from coderlm.decoding.sampler import allowed_log_probs, sample_tokens
from coderlm.devices import resolve_device
from coderlm.evaluation.metrics import task_spearman
from coderlm.model.config import ModelConfig, size_options
from coderlm.model.pretrained import SCRATCH, PretrainedEncoder, encoder_facts
from coderlm.model.transfer import adapt_state, finetune_config
from coderlm.model.transformer import EncoderDecoder
from coderlm.numbers.codec import NumberCodec
from coderlm.numbers.formats import P10, NumberFormat, format_from_dict
from coderlm.text.bpe import BPETokenizer, TokenBatch
from coderlm.text.pretrained import SETTINGS_FILE, PretrainedTokenizer, load_tokenizer
from coderlm.training.batches import TokenTensors, length_sorted_batches
from coderlm.training.config import TrainConfig
from coderlm.training.encoder_cache import CachedTensors, EncoderCache
from coderlm.training.objective import LossOf
from coderlm.training.sampling import BatchSampler
from coderlm.training.trainer import Trainer

log = logging.getLogger("coderlm")

CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE = "config.json", "model.safetensors", "tokenizer.json"
# pretokenize for a pretrained encoder's tokenizer: structure markers if it loses layout / always / never
PRETRAINED_PRETOKENIZE = {"code": None, "structure": True, "plain": False}
FINETUNE_LEARNING_RATE = 5e-5  # the paper's fine-tuning rate; used with init= unless training sets one


class RegressionLM:
    """An encoder-decoder that reads text and writes numbers digit by digit.

    Args:
        number_format: how each number is spelled (default ``P10()``: sign,
            exponent, 4 mantissa digits, exponents -10..10); or ``IEEE(...)``.
        specials: special values to learn as tokens, from ``("nan", "+inf",
            "-inf", "invalid")``; without them non-finite targets are an error.
        vocab_size: size of the input BPE vocabulary learned in ``fit``.
        pretokenize: where BPE merges stop: ``"code"`` (words, punctuation, single
            digits; default) or ``"lines"`` (only line ends; far shorter for
            machine-written text such as ONNX graphs). With a pretrained encoder
            (``model={"encoder": ...}``), its own tokenizer is used and this is
            ``"code"`` (newline/indent markers if that tokenizer drops layout),
            ``"structure"`` (always markers) or ``"plain"`` (never); see docs/encoders.md.
        max_input_len: encoder context in tokens; longer texts are truncated
            (and counted in ``fit_report_`` / the log).
        model: model options, e.g. ``{"encoder_layers": 4}``, or a pretrained encoder
            ``{"encoder": "minilm"}`` / a local Hugging Face folder (see ``ModelConfig``).
        training: training options, e.g. ``{"steps": 2000}``, ``{"encoder_cache": "memory"}``
            (see ``TrainConfig``).
        num_samples: samples per input for ``predict`` and intervals.
        temperature: sampling temperature; 0 decodes greedily.
        batch_size: inputs per forward pass when predicting.
        device: torch device, e.g. ``"cpu"`` or ``"cuda"``.
    """

    def __init__(
        self,
        number_format: NumberFormat | None = None,
        *,
        specials: Sequence[str] = (),
        vocab_size: int = 4096,
        pretokenize: str = "code",
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
            missing: what a NaN/None target means: ``"error"`` (default; unless
                ``specials`` has ``"nan"``, which learns it as a value) or ``"mask"``
                (a missing objective, left out of the loss).
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
        if missing not in ("error", "mask"):
            raise ValueError(f"missing must be 'error' or 'mask', got {missing!r}")
        base = self._init_model(init) if init is not None else None
        texts = check_texts(texts)
        specials = tuple(self.specials) or (base.codec_.specials if base is not None else ())
        values = check_targets(targets, len(texts), None, specials, allow_nan=missing == "mask")
        k = values.shape[1]
        names = list(objectives) if objectives is not None else [f"y{j}" for j in range(k)]
        if len(names) != k:
            raise ValueError(f"got {len(names)} objective names for {k} objectives")
        if tasks is not None and len(tasks) != len(texts):
            raise ValueError(f"got {len(tasks)} task labels for {len(texts)} texts")
        model_options = size_options(self.model, type(self).__name__)
        training = dict(self.training or {})
        if base is not None:
            training.setdefault("learning_rate", FINETUNE_LEARNING_RATE)
        train_config = TrainConfig.from_dict(training)
        run_dir = Path(run_dir) if run_dir is not None else None
        if resume and run_dir is None:
            raise ValueError("resume=True needs run_dir")

        number_format = self.number_format or (base.codec_.format if base is not None else P10())
        codec = NumberCodec(number_format, k, specials)
        if base is not None:
            _check_same_number_tokens(codec, base.codec_)
        train_set = self._encode_targets(codec, values, missing)
        encoder = model_options.get("encoder", SCRATCH)
        facts = encoder_facts(encoder) if base is None and encoder != SCRATCH else None
        if base is not None:
            tokenizer = base.tokenizer_
        elif resume and (run_dir / TOKENIZER_FILE).is_file():
            tokenizer = load_tokenizer(run_dir / TOKENIZER_FILE)
        elif facts is not None:
            if self.pretokenize not in PRETRAINED_PRETOKENIZE:
                raise ValueError(
                    f"pretokenize for a pretrained encoder must be one of "
                    f"{sorted(PRETRAINED_PRETOKENIZE)}, got {self.pretokenize!r}"
                )
            tokenizer = PretrainedTokenizer.from_folder(facts["folder"], PRETRAINED_PRETOKENIZE[self.pretokenize])
        else:
            tokenizer = BPETokenizer.train(texts, self.vocab_size, pretokenize=self.pretokenize)
        if base is not None:
            config = finetune_config(base.model_.cfg, codec.total_length, model_options)
        else:
            derived = {"input_vocab_size": tokenizer.vocab_size, "max_input_len": self.max_input_len}
            if facts is not None:  # the body's embedding table, its position limit, its width unless set
                derived = {
                    "input_vocab_size": max(facts["vocab"], tokenizer.vocab_size),
                    "max_input_len": min(self.max_input_len, facts["max_positions"] or self.max_input_len),
                }
                model_options.setdefault("encoder_dim", facts["hidden"])
            config = ModelConfig(
                output_vocab_size=codec.vocab_size,
                output_length=codec.total_length,
                pad_id=tokenizer.pad_id,
                **derived,
                **model_options,
            )
        input_len = min(self.max_input_len, config.max_input_len)
        tokens = tokenizer.encode(texts, input_len)
        self._log_truncation(tokens, input_len)
        torch.manual_seed(train_config.seed)
        init_state = base.model_.state_dict() if base is not None else None  # before self.model_ changes
        self.model_ = EncoderDecoder(config, base.model_.encoder_config if base is not None else None)
        if init_state is not None:
            self.model_.load_state_dict(adapt_state(init_state, codec.length, codec.total_length))
        self.codec_, self.tokenizer_, self.objectives_ = codec, tokenizer, names
        self.fit_report_ = {
            **({"init": str(init) if isinstance(init, (str, Path)) else "RegressionLM"} if base is not None else {}),
            "examples": len(texts),
            "truncated": tokens.truncated,
            "overflow": train_set["overflow"],
            "underflow": train_set["underflow"],
        }
        if run_dir is not None:
            self._write_files(run_dir, weights=False)  # tokenizer and config first: a resume needs them

        device = torch.device(self._device())
        tensors = self._tensor_maker(train_config, run_dir, input_len, device)
        data = tensors(tokens, train_set)
        val_loss = None
        if val_texts is not None:
            val_texts = check_texts(val_texts)
            val_values = check_targets(val_targets, len(val_texts), k, specials, allow_nan=missing == "mask")
            val_set = self._encode_targets(codec, val_values, missing)
            if train_config.val_metric == "spearman":
                val_loss = self._rank_loss(val_texts, val_values, val_tasks, train_config.val_samples)
            else:
                val_loss = tensors(tokenizer.encode(val_texts, input_len), val_set).mean_loss
        sampler = BatchSampler(
            len(texts),
            train_config.batch_size,
            train_config.seed,
            tasks,
            train_config.task_sampling,
            train_config.task_temperature,
            tokens.mask.sum(1) if train_config.bucket_by_length else None,
        )
        trainer = Trainer(
            LossOf(self.model_), train_config, sampler, data.batch, val_loss=val_loss, run_dir=run_dir, device=device
        )
        result = trainer.run(resume=resume)
        self.model_.eval()
        self.loss_history_ = result.losses
        self.fit_report_ |= {
            "steps": result.step,
            "train_seconds": round(result.seconds, 3),
            "val_metric": train_config.val_metric if val_texts is not None else None,
            "best_val_loss": result.best_val_loss,
            # the weights kept are best_step's; None when no validation ran or (resumed) it came before
            "best_step": next((step for step, loss in result.val_losses if loss == result.best_val_loss), None),
            "kept_steps": result.kept_steps,  # the weights returned (averaged with average_best > 1), best first
            "val_losses": [[step, loss] for step, loss in result.val_losses],
            "stopped_early": result.stopped_early,
        }
        if run_dir is not None:
            self._write_files(run_dir, weights=True)
        return self

    def _rank_loss(self, texts: list[str], values: np.ndarray, tasks: Sequence[str] | None, num_samples: int):
        """Validation as 1 - Spearman of sample medians (within each task, mean over objectives)."""
        if tasks is not None and len(tasks) != len(texts):
            raise ValueError(f"got {len(tasks)} validation task labels for {len(texts)} validation texts")

        tokens = self._encode(texts)  # once: every evaluation reads the same inputs

        def loss(_objective) -> float:
            medians = point_estimate(self.codec_.decode(self._sample_ids(tokens, num_samples, None, 0)), "median")
            rhos = [task_spearman(medians[:, j], values[:, j], tasks) for j in range(values.shape[1])]
            return 1.0 - float(np.nanmean(rhos)) if not np.isnan(rhos).all() else 1.0

        return loss

    def _tensor_maker(self, config: TrainConfig, run_dir: Path | None, input_len: int, device: torch.device):
        """``make(tokens, encoded_targets)`` -> training tensors; with ``encoder_cache`` they hold encoder states."""
        if config.encoder_cache == "off":
            return lambda tokens, targets: TokenTensors(tokens, targets["ids"], targets["weights"], device)
        encoder = self.model_.encoder
        if not isinstance(encoder, PretrainedEncoder) or not encoder.frozen:
            raise ValueError(
                "training option encoder_cache needs a frozen pretrained encoder "
                "(model option encoder=minilm or a folder, train_encoder off)"
            )
        folder = None
        if config.encoder_cache == "disk":
            if not config.cache_dir and run_dir is None:
                raise ValueError("training option encoder_cache='disk' needs cache_dir or a run folder")
            folder = Path(config.cache_dir) if config.cache_dir else run_dir / "encoder_cache"
        cache = EncoderCache(encoder.to(device), config.cache_dtype, folder, device=device)
        report = self.fit_report_.setdefault("encoder_cache", {"computed": 0, "seconds": 0.0})

        def make(tokens: TokenBatch, targets: dict) -> CachedTensors:
            began = time.perf_counter()
            states = cache.states(tokens, input_len)
            report["computed"] += cache.computed
            report["seconds"] = round(report["seconds"] + time.perf_counter() - began, 3)
            return CachedTensors(tokens, states, targets["ids"], targets["weights"], device)

        return make

    @staticmethod
    def _encode_targets(codec: NumberCodec, values: np.ndarray, missing: str) -> dict:
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
        weights = np.repeat(present, codec.length, axis=1).astype(np.float32)
        return {"ids": encoded.ids, "weights": weights, "overflow": encoded.overflow, "underflow": encoded.underflow}

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
            tokens = sample_tokens(self.model_, automaton, *batch, num_samples, temperature, generator)
            out[rows] = tokens.cpu().numpy()
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
            logp = allowed_log_probs(self.model_(ids, mask, y), automaton, y)  # (b, L)
            out[rows] = logp.view(len(rows), self.codec_.num_objectives, -1).sum(-1).cpu().numpy()
        return out if per_objective else out.sum(1)

    # --------------------------------------------------------- persistence
    def save(self, path: str | Path) -> Path:
        """Write config.json, model.safetensors and tokenizer.json into folder ``path``.

        Each file is written under a temporary name and renamed into place;
        config.json goes last, so a folder with it is a complete model.
        Other files in the folder (a run's metrics, checkpoints) are kept.
        """
        self._check_fitted()
        return self._write_files(Path(path), weights=True)

    def _write_files(self, path: Path, weights: bool) -> Path:
        self.tokenizer_.save(path / TOKENIZER_FILE)
        if isinstance(self.tokenizer_, BPETokenizer):
            (path / SETTINGS_FILE).unlink(missing_ok=True)  # a pretrained tokenizer's settings, from an older save
        if not weights:
            return path
        state = {k: v.detach().cpu().contiguous() for k, v in self.model_.state_dict().items()}
        write_atomic(path / WEIGHTS_FILE, safetensors_bytes(state))
        config = {
            "coderlm_version": __version__,
            "kind": type(self).__name__,
            "params": self._params_dict(),
            "objectives": self.objectives_,
            "model": self.model_.cfg.to_dict(),
            **self._encoder_record(),
            "codec": self.codec_.to_dict(),
            "fit_report": self.fit_report_,
        }
        write_atomic(path / CONFIG_FILE, json.dumps(config, indent=2) + "\n")
        return path

    @classmethod
    def load(cls, path: str | Path, device: str = "cpu") -> RegressionLM:
        """Load a model written by ``save``; errors name the missing or bad file."""
        path = Path(path)
        for name in (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE):
            if not (path / name).is_file():
                raise FileNotFoundError(f"{path / name} is missing: not a saved coderlm model")
        try:
            config = json.loads((path / CONFIG_FILE).read_text())
            if config.get("kind") != cls.__name__:
                raise ValueError(f"holds a {config.get('kind')!r}, not a {cls.__name__}")
            params = dict(config["params"])
            if params.get("number_format") is not None:
                params["number_format"] = format_from_dict(params["number_format"])
            params["specials"] = tuple(params.get("specials", ()))
            params["device"] = device
            rlm = cls(**params)
            rlm.codec_ = NumberCodec.from_dict(config["codec"])
            rlm.model_ = EncoderDecoder(ModelConfig.from_dict(config["model"]), config.get("encoder_config"))
            rlm.fit_report_ = config.get("fit_report", {})
            rlm.objectives_ = list(config["objectives"])
        except (KeyError, TypeError, ValueError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path / CONFIG_FILE}: {exc}") from exc
        rlm.model_.load_state_dict(load_file(str(path / WEIGHTS_FILE)))
        expected = config.get("encoder_weights_sha256")
        if expected is not None and rlm.model_.encoder.weights_hash() != expected:
            raise ValueError(
                f"{path}: the frozen encoder {rlm.model_.cfg.encoder!r} is not the one this model was "
                "trained on (its weights changed); restore that encoder"
            )
        rlm.model_.to(rlm._device()).eval()
        rlm.tokenizer_ = load_tokenizer(path / TOKENIZER_FILE)
        return rlm

    def _encoder_record(self) -> dict:
        """A pretrained encoder's config (to rebuild it) and, when frozen (not saved), its weights' hash."""
        encoder = self.model_.encoder
        if not isinstance(encoder, PretrainedEncoder):
            return {}
        record: dict = {"encoder_config": encoder.hf_config}
        if encoder.frozen:
            record["encoder_weights_sha256"] = encoder.weights_hash()
        return record

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

    def _params_dict(self) -> dict:
        return {
            "number_format": self.number_format.to_dict() if self.number_format is not None else None,
            "specials": list(self.specials),
            "vocab_size": self.vocab_size,
            "pretokenize": self.pretokenize,
            "max_input_len": self.max_input_len,
            "model": self.model,
            "training": self.training,
            "num_samples": self.num_samples,
            "temperature": self.temperature,
            "batch_size": self.batch_size,
        }

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet: call fit() or load() first")

    def _device(self) -> str:
        return resolve_device(self.device)

    def _automaton(self):
        return self.codec_.automaton.to(self._device())

    def _input_len(self) -> int:
        """Tokens read per input: ``max_input_len``, capped by the model's context (fine-tuning keeps init's)."""
        return min(self.max_input_len, self.model_.cfg.max_input_len)

    def _log_truncation(self, tokens: TokenBatch, input_len: int) -> None:
        if tokens.truncated:
            log.warning(
                "%d of %d text(s) exceed max_input_len=%d tokens and were truncated (longest: %d)",
                tokens.truncated,
                len(tokens.lengths),
                input_len,
                int(tokens.lengths.max()),
            )

    def _encode(self, texts: list[str]) -> TokenBatch:
        """Input token ids as the model reads them; truncation is reported."""
        tokens = self.tokenizer_.encode(texts, self._input_len())
        self._log_truncation(tokens, self._input_len())
        return tokens

    def _batches(self, tokens: TokenBatch) -> Iterator[tuple[np.ndarray, tuple[torch.Tensor, torch.Tensor]]]:
        """Batches of similar length (less padding); yields the original row indices with them."""
        kept = tokens.mask.sum(1)
        self.model_.eval()
        for rows in length_sorted_batches(kept, self.batch_size):
            width = int(kept[rows].max())
            ids = torch.from_numpy(tokens.ids[rows, :width]).to(self._device())
            mask = torch.from_numpy(tokens.mask[rows, :width]).to(self._device())
            yield rows, (ids, mask)


def _check_same_number_tokens(codec: NumberCodec, base: NumberCodec) -> None:
    """Fine-tuning keeps the decoder's vocabulary: the number format and specials must match the init model's."""
    differences = []
    if codec.format.to_dict() != base.format.to_dict():
        differences.append(f"number format {codec.format.to_dict()} != the init model's {base.format.to_dict()}")
    if codec.specials != base.specials:
        differences.append(f"specials {list(codec.specials)} != the init model's {list(base.specials)}")
    if differences:
        raise ValueError(
            "fine-tuning keeps the init model's number tokens, but "
            + "; ".join(differences)
            + " (leave number_format/specials unset to use the init model's)"
        )
