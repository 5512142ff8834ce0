"""The paper's ablation baseline: the RLM's encoder, a pooled state and a linear head, trained with MSE.

Everything but the output side matches ``RegressionLM``: the same input tokenizer and encoder
(``model.build``: a learned BPE and the scratch encoder, or a pretrained one), the same ``Trainer``,
``BatchSampler`` and ``training`` options. Two variants, as in the paper's table:

* ``normalize=True`` ("normalized"): targets min-max scaled to [0, 1] per
  (task, objective) on the training set (``TargetScaler``); predictions are
  scaled back.
* ``normalize=False`` ("raw"): the head regresses the raw values. When targets
  span decades this trains badly; that is the point of the ablation, so nothing
  here rescues it.
* ``log_target=True`` ("log", with ``normalize``): an objective whose values span decades is
  first taken to the signed log space the tree baselines regress in (``base.log_scale``), then
  min-max scaled. The strongest head, and the fair ablation where labels span decades (bytes of
  memory, seconds of runtime): min-max scaling raw values there leaves most of them squeezed
  near 0, and the head ranks them badly for reasons that have nothing to do with decoding.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from coderlm.data.checks import check_texts
from coderlm.devices import resolve_device
from coderlm.evaluation.baselines.base import (
    check_fit_inputs,
    check_fitted,
    check_tasks,
    from_fit_space,
    log_scale,
    to_fit_space,
)
from coderlm.model.build import build_tokenizer, model_config
from coderlm.model.config import ModelConfig, size_options
from coderlm.model.hf_encoder import SCRATCH, PretrainedEncoder
from coderlm.model.transformer import Encoder, init_weights, masked_mean, weighted_mean
from coderlm.training.batches import TokenTensors
from coderlm.training.config import TrainConfig
from coderlm.training.examples import augmented_texts
from coderlm.training.objective import LossOf
from coderlm.training.sampling import BatchSampler
from coderlm.training.trainer import Trainer


class RegressionHead(nn.Module):
    """Encoder -> masked mean over tokens -> LayerNorm -> Linear(num_outputs)."""

    def __init__(self, cfg: ModelConfig, num_outputs: int) -> None:
        super().__init__()
        self.cfg = cfg
        self.encoder = Encoder(cfg) if cfg.encoder == SCRATCH else PretrainedEncoder(cfg)
        self.ln = nn.LayerNorm(cfg.encoder_dim)
        self.head = nn.Linear(cfg.encoder_dim, num_outputs)
        for part in (self,) if cfg.encoder == SCRATCH else (self.encoder.proj, self.ln, self.head):
            part.apply(init_weights)  # a pretrained body keeps its weights

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """ids, mask (B, T) -> predictions (B, num_outputs)."""
        return self.head(self.ln(masked_mean(self.encoder(ids, mask), mask)))

    def loss(
        self, ids: torch.Tensor, mask: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Mean squared error; ``weights`` (B, k) masks out missing objectives."""
        return weighted_mean(F.mse_loss(self(ids, mask).float(), targets.float(), reduction="none"), weights)


class TargetScaler:
    """Per-(task, objective) min-max scaling to [0, 1], fitted on training targets.

    Unseen tasks at prediction time use the scale of all tasks together.
    """

    def __init__(self) -> None:
        self.low_: dict[str, np.ndarray] = {}
        self.span_: dict[str, np.ndarray] = {}

    def fit(self, targets: np.ndarray, tasks: list[str] | None = None) -> TargetScaler:
        """Missing targets (NaN) are ignored; a task that never has an objective uses the all-task scale."""
        tasks = tasks or [""] * len(targets)
        groups = {"*": np.ones(len(targets), bool)} | {t: np.asarray(tasks) == t for t in sorted(set(tasks))}
        for name, rows in groups.items():
            present = ~np.isnan(targets[rows])
            big = np.where(present, targets[rows], -np.inf).max(0)
            small = np.where(present, targets[rows], np.inf).min(0)
            seen = present.any(0)
            if name != "*":
                small, big = (
                    np.where(seen, small, self.low_["*"]),
                    np.where(seen, big, self.low_["*"] + self.span_["*"]),
                )
            low = np.where(np.isfinite(small), small, 0.0)
            self.low_[name], self.span_[name] = low, np.where(big > low, big - low, 1.0)
        return self

    def _params(self, tasks: list[str] | None, n: int) -> tuple[np.ndarray, np.ndarray]:
        names = [t if t in self.low_ else "*" for t in (tasks or [""] * n)]
        return np.stack([self.low_[t] for t in names]), np.stack([self.span_[t] for t in names])

    def transform(self, targets: np.ndarray, tasks: list[str] | None = None) -> np.ndarray:
        low, span = self._params(tasks, len(targets))
        return (targets - low) / span

    def inverse(self, scaled: np.ndarray, tasks: list[str] | None = None) -> np.ndarray:
        low, span = self._params(tasks, len(scaled))
        return scaled * span + low

    def to_dict(self) -> dict:
        return {
            "low": {k: v.tolist() for k, v in self.low_.items()},
            "span": {k: v.tolist() for k, v in self.span_.items()},
        }

    @classmethod
    def from_dict(cls, spec: dict) -> TargetScaler:
        scaler = cls()
        scaler.low_ = {k: np.asarray(v) for k, v in spec["low"].items()}
        scaler.span_ = {k: np.asarray(v) for k, v in spec["span"].items()}
        return scaler


class RegressionHeadRegressor:
    """Encoder -> masked mean -> LayerNorm -> Linear(k), MSE on (optionally scaled) targets.

    Args:
        normalize: min-max scale targets per (task, objective) to [0, 1] (see module doc).
        log_target: regress objectives that span decades in signed log space (``base.log_scale``).
        vocab_size, pretokenize, layout_markers, max_input_len: how text is read, as in ``RegressionLM``.
        model: ``ModelConfig`` options, e.g. ``{"encoder_dim": 128}`` (decoder options are
            accepted, so a ``RegressionLM``'s dict can be reused, and ignored).
        training: ``TrainConfig`` options, e.g. ``{"steps": 2000}``; ``augment`` trains on rewritten
            copies of each text as the RLM does (``coderlm.text.augment``).
        batch_size: inputs per forward pass when predicting.
        device: torch device, e.g. ``"cpu"``, ``"cuda"`` or ``"auto"``.
    """

    def __init__(
        self,
        normalize: bool = True,
        log_target: bool = False,
        vocab_size: int = 4096,
        pretokenize: str = "code",
        layout_markers: str = "auto",
        max_input_len: int = 512,
        model: dict | None = None,
        training: dict | None = None,
        batch_size: int = 64,
        device: str = "cpu",
    ) -> None:
        self.normalize = normalize
        self.log_target = log_target
        self.vocab_size = vocab_size
        self.pretokenize = pretokenize
        self.layout_markers = layout_markers
        self.max_input_len = max_input_len
        self.model = model
        self.training = training
        self.batch_size = batch_size
        self.device = device

    def fit(self, texts: Sequence[str], targets, tasks: Sequence[str] | None = None) -> RegressionHeadRegressor:
        """Learn the input tokenizer, then train the model; missing (NaN) objectives get zero loss weight."""
        texts, values, tasks = check_fit_inputs(texts, targets, tasks)
        options = size_options(self.model, type(self).__name__)
        train_config = TrainConfig.from_dict(dict(self.training or {}))

        present = ~np.isnan(values)
        # per objective: 0 = as it is, c > 0 = signed log at scale c (all-NaN columns stay linear)
        logs = [log_scale(values[:, j]) if self.log_target else 0.0 for j in range(values.shape[1])]
        values = np.stack([to_fit_space(values[:, j], c) for j, c in enumerate(logs)], axis=1)
        scaler = TargetScaler().fit(values, tasks) if self.normalize else None
        scaled = scaler.transform(values, tasks) if scaler is not None else values
        tokenizer = build_tokenizer(
            texts,
            options.get("encoder", SCRATCH),
            vocab_size=self.vocab_size,
            pretokenize=self.pretokenize,
            layout_markers=self.layout_markers,
        )
        config = model_config(tokenizer, self.max_input_len, options, output_vocab_size=1, output_length=1)
        if train_config.augment:  # rewritten copies, as the RLM trains on (after the BPE, as there)
            texts, source = augmented_texts(texts, train_config.augment, train_config.seed)
            scaled, present = scaled[source], present[source]
            tasks = [tasks[i] for i in source] if tasks is not None else None
        tokens = tokenizer.encode(texts, config.max_input_len)
        torch.manual_seed(train_config.seed)
        model = RegressionHead(config, values.shape[1])
        device = torch.device(self._device())
        data = TokenTensors(tokens, np.where(present, scaled, 0.0), present, device)
        sampler = BatchSampler.for_config(len(texts), train_config, tasks, tokens.mask.sum(1))
        result = Trainer(LossOf(model), train_config, sampler, data.batch, device=device).run()
        model.eval()
        self.model_, self.tokenizer_, self.scaler_ = model, tokenizer, scaler
        self.log_target_ = np.array(logs)  # (k,) log_scale per objective: 0 = linear
        self.loss_history_ = result.losses
        self.fit_report_ = {
            "examples": len(texts),
            "truncated": tokens.truncated,
            "steps": result.step,
            "train_seconds": round(result.seconds, 3),
        }
        return self

    @torch.no_grad()
    def predict(self, texts: Sequence[str], tasks: Sequence[str] | None = None) -> np.ndarray:
        """Predictions (n, k) float64, scaled back to target units when ``normalize``."""
        check_fitted(self, "model_")
        texts = check_texts(texts)
        tasks = check_tasks(tasks, len(texts))
        tokens = self.tokenizer_.encode(texts, self.model_.cfg.max_input_len)
        device = torch.device(self._device())
        self.model_.to(device).eval()
        out = np.empty((len(texts), self.model_.head.out_features), dtype=np.float64)
        for rows, ids, mask in tokens.by_length(self.batch_size, device):
            out[rows] = self.model_(ids, mask).float().cpu().numpy()
        out = self.scaler_.inverse(out, tasks) if self.scaler_ is not None else out
        return np.stack([from_fit_space(out[:, j], float(c)) for j, c in enumerate(self.log_target_)], axis=1)

    def _device(self) -> str:
        return resolve_device(self.device)


def options_like(params: dict) -> dict:
    """The options of a ``RegressionLM`` (its ``get_params()``) that decide how text is read, the network
    and the training budget, for a head that differs from it only on the output side. The prediction
    batch size stays the head's own."""
    shared = set(inspect.signature(RegressionHeadRegressor).parameters) - {"batch_size"}
    return {name: value for name, value in params.items() if name in shared}
