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

Weight selection: without validation rows the head returns its final weights (or their moving average,
``ema_decay``). ``fit(..., val_texts=, val_targets=)`` selects them as ``RegressionLM`` does: every
``eval_every`` steps the head is scored on those rows by ``val_metric`` ("spearman": 1 - the within-task
rank correlation of its predictions, averaged over objectives; "loss": their squared error in the space
it regresses), stops after ``patience`` evaluations without improvement, and keeps the best weights (the
``average_best`` best, averaged): the same rule as the RLM's, for an ablation that differs only in the
output side.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from coderlm.data.checks import check_targets, check_texts
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
from coderlm.text.bpe import TokenBatch
from coderlm.training.batches import TokenTensors
from coderlm.training.config import TrainConfig
from coderlm.training.examples import augmented_texts
from coderlm.training.objective import LossOf
from coderlm.training.sampling import BatchSampler
from coderlm.training.trainer import Trainer
from coderlm.training.validation import RankingValidation, Validation


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

    def fit(
        self,
        texts: Sequence[str],
        targets,
        tasks: Sequence[str] | None = None,
        val_texts: Sequence[str] | None = None,
        val_targets=None,
        val_tasks: Sequence[str] | None = None,
    ) -> RegressionHeadRegressor:
        """Learn the input tokenizer, then train the model; missing (NaN) objectives get zero loss weight.
        ``val_texts`` / ``val_targets`` (/ ``val_tasks``): rows that select the weights kept (module doc)."""
        texts, values, tasks = check_fit_inputs(texts, targets, tasks)
        val = check_validation(val_texts, val_targets, val_tasks, values.shape[1])
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
        val_loss = None
        if val is not None:
            val_space = np.stack([to_fit_space(val[1][:, j], c) for j, c in enumerate(logs)], axis=1)
            val_scaled = scaler.transform(val_space, val[2]) if scaler is not None else val_space
            val_tokens = tokenizer.encode(val[0], config.max_input_len)
            val_loss = head_validation(
                model, val_tokens, val_scaled, val[2], train_config.val_metric, train_config.val_task_weights
            )
        trainer = Trainer(LossOf(model), train_config, sampler, data.batch, val_loss=val_loss, device=device)
        result = trainer.run()
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
        if val is not None:
            self.fit_report_ |= result.report(train_config.val_metric)
        return self

    @torch.no_grad()
    def predict(self, texts: Sequence[str], tasks: Sequence[str] | None = None) -> np.ndarray:
        """Predictions (n, k) float64, scaled back to target units when ``normalize``."""
        check_fitted(self, "model_")
        texts = check_texts(texts)
        tasks = check_tasks(tasks, len(texts))
        tokens = self.tokenizer_.encode(texts, self.model_.cfg.max_input_len)
        self.model_.to(torch.device(self._device())).eval()
        out = head_outputs(self.model_, tokens, self.batch_size)
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


def selection_like(rlm, training: dict | None) -> dict:
    """``training`` options with the weight selection a fitted ``RegressionLM``'s fit ran, where they leave
    it out: its ``val_metric`` and moving average (``ema_decay``, set by its start) as its fit report
    records them, and evaluations as often as it made them."""
    report = getattr(rlm, "fit_report_", None) or {}
    training = dict(training or {})
    for key in ("val_metric", "ema_decay"):
        if key not in training and report.get(key):
            training[key] = report[key]
    evaluated = report.get("val_losses") or []
    if "eval_every" not in training and len(evaluated) > 1:
        training["eval_every"] = int(evaluated[0][0])
    return training


@torch.no_grad()
def head_outputs(model: RegressionHead, tokens: TokenBatch, batch_size: int) -> np.ndarray:
    """The head's raw outputs (n, k) float64 for encoded inputs, in the space it regresses."""
    device = next(model.parameters()).device
    out = np.empty((len(tokens.ids), model.head.out_features), dtype=np.float64)
    for rows, ids, mask in tokens.by_length(batch_size, device):
        out[rows] = model(ids, mask).float().cpu().numpy()
    return out


def check_validation(texts, targets, tasks, num_objectives: int) -> tuple | None:
    """``None`` without validation rows, else (texts, float64 targets (n, k), tasks); ValueError when only
    one of texts and targets is given or their objectives differ from the training targets'."""
    if texts is None and targets is None:
        return None
    if texts is None or targets is None:
        raise ValueError("validation needs both val_texts and val_targets")
    texts = check_texts(texts)
    values = check_targets(targets, len(texts), None, (), allow_nan=True)
    if values.shape[1] != num_objectives:
        raise ValueError(f"val_targets have {values.shape[1]} objective(s), the training targets {num_objectives}")
    return texts, values, check_tasks(tasks, len(texts))


def head_validation(
    model: RegressionHead,
    tokens: TokenBatch,
    scaled: np.ndarray,
    tasks: list[str] | None,
    metric: str,
    task_weights: str = "rows",
) -> Validation:
    """What the trainer minimizes on the validation rows (``scaled``: their targets in the space the head
    regresses, NaN where missing): the RLM's ``RankingValidation`` of the head's outputs as its one sample
    ("spearman", tasks weighted by ``task_weights`` as the RLM's ``val_task_weights``; per-task scaling and the
    log are monotone, so the outputs rank as predictions do), or their mean squared error over the present
    targets ("loss")."""
    outputs = lambda: head_outputs(model, tokens, 64)  # noqa: E731
    if metric == "spearman":
        return RankingValidation(lambda: outputs()[:, None, :], scaled, tasks, task_weights)
    present = ~np.isnan(scaled)
    return lambda _objective: float(np.mean((outputs()[present] - scaled[present]) ** 2))
