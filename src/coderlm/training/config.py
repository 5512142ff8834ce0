"""Training options: one frozen dataclass, every field documented where declared."""

from __future__ import annotations

import dataclasses
from typing import Any

from coderlm.evaluation.metrics import TASK_WEIGHTS
from coderlm.options import OptionError, check_integers, check_options

OPTIMIZERS = ("adamw", "adafactor")
TASK_SAMPLING = ("proportional", "temperature", "weights")
PRECISIONS = ("fp32", "bf16")
ENCODER_CACHES = ("off", "memory", "disk")
CACHE_DTYPES = ("fp16", "bf16", "fp32")
VAL_METRICS = ("loss", "spearman")


def parse_task_weights(text: str) -> dict[str, float]:
    """``"python=2,kernels=1"`` -> ``{"python": 2.0, "kernels": 1.0}`` (training option ``task_weights``)."""
    weights: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.rpartition("=")
        try:
            weight = float(value) if sep and name else float("nan")
        except ValueError:
            weight = float("nan")
        if not weight >= 0 or weight == float("inf") or name in weights:
            problem = "is named twice" if name in weights else "is not TASK=W with W a finite number >= 0"
            raise OptionError("task_weights", f"{item!r} {problem}", "training option")
        weights[name] = weight
    if weights and not sum(weights.values()) > 0:
        raise OptionError("task_weights", "needs a weight above 0", "training option")
    return weights


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    steps: int = 1000  # optimizer steps
    max_seconds: float = 0.0  # also stop after this many seconds of training, the schedule run by time; 0 = no limit
    batch_size: int = 32  # examples per optimizer step (split over grad_accum micro-batches and DDP ranks)
    grad_accum: int = 1  # micro-batches accumulated per optimizer step
    optimizer: str = "adamw"  # "adamw" or "adafactor" (the paper's choice)
    learning_rate: float = 1e-3  # peak rate; unset: see start_rate (5e-5 fine-tuning, 3e-4 network text from scratch)
    weight_decay: float = 0.0  # decoupled weight decay
    warmup_fraction: float = 0.1  # share of steps with linear warm-up, then cosine decay to 0
    digit_decay: float = 1.0  # loss weight of the k-th mantissa digit after the first: digit_decay**k (1: plain NLL)
    ordinal_loss: float = 0.0  # plus this x each token's expected distance from the true one (digits, decades)
    aux_regression: float = 0.0  # plus this x the MSE of a linear head on the pooled encoder (dropped after training)
    target_noise: float = 0.1  # targets jittered by this x their std each step (0 = exact); unset: see start_rate
    augment: int = 0  # rewritten copies of each Python or ONNX text, same targets (coderlm.text.augment); 0 = off
    clip_norm: float = 2.0  # gradient clipping at this global norm; 0 disables it
    ema_decay: float = 0.0  # validate, keep and return a moving average of the weights; 0 = off; unset: see start_rate
    task_sampling: str = "proportional"  # "proportional" (every row equally often), "temperature" or "weights"
    task_temperature: float = 2.0  # with "temperature": task weight ~ rows**(1/T); large T -> uniform over tasks
    task_weights: str = ""  # with "weights": TASK=W,TASK=W,...: each task's share of the rows drawn (every task named)
    bucket_by_length: bool = False  # batches of rows of similar length (less padding: faster on long, varied texts)
    eval_every: int = 0  # steps between validation-loss evaluations; 0 = only at the end
    patience: int = 0  # stop after this many evaluations without improvement; 0 = never stop early
    val_metric: str = "loss"  # what validation minimizes: "loss" (NLL) or "spearman" (1 - rho of sample medians)
    val_samples: int = 16  # samples per validation input with val_metric "spearman"; 0: the exact median (walked)
    val_task_weights: str = "rows"  # with val_metric "spearman": tasks weighted by their rows or "equal"
    average_best: int = 1  # return the uniform average of the N best-validating weights (1: the best one)
    checkpoint_every: int = 0  # steps between checkpoints in the run folder; 0 = only at the end
    keep_checkpoints: int = 2  # step checkpoints kept on disk (the best one is kept apart)
    log_every: int = 10  # steps between lines in metrics.jsonl
    precision: str = "fp32"  # "fp32" or "bf16" (autocast; meant for CUDA)
    compile: bool = False  # torch.compile the model (meant for CUDA)
    progress: bool = True  # show a progress bar on stderr
    seed: int = 0  # seeds weights, batch order and dropout
    encoder_cache: str = "off"  # frozen pretrained encoder: "memory" or "disk" computes its states once per input
    cache_dtype: str = "fp16"  # cached encoder states: "fp16", "bf16" or "fp32"
    cache_dir: str = ""  # folder of the "disk" encoder cache (default: encoder_cache/ in the run folder)

    def __post_init__(self) -> None:
        positive = (
            "steps",
            "batch_size",
            "grad_accum",
            "keep_checkpoints",
            "log_every",
            "average_best",
        )
        check_integers(self, positive, "training option")
        counts = ("eval_every", "patience", "checkpoint_every", "seed", "augment", "val_samples")
        check_integers(self, counts, "training option", minimum=0)
        if self.batch_size % self.grad_accum:
            raise ValueError(f"training option grad_accum={self.grad_accum} must divide batch_size={self.batch_size}")
        for name, allowed in (
            ("optimizer", OPTIMIZERS),
            ("task_sampling", TASK_SAMPLING),
            ("precision", PRECISIONS),
            ("encoder_cache", ENCODER_CACHES),
            ("cache_dtype", CACHE_DTYPES),
            ("val_metric", VAL_METRICS),
            ("val_task_weights", TASK_WEIGHTS),
        ):
            if getattr(self, name) not in allowed:
                raise OptionError(name, f"must be one of {allowed}, got {getattr(self, name)!r}", "training option")
        if not self.learning_rate > 0:
            raise OptionError("learning_rate", f"must be > 0, got {self.learning_rate!r}", "training option")
        if not 0 <= self.warmup_fraction < 1:
            raise OptionError("warmup_fraction", f"must be in [0, 1), got {self.warmup_fraction!r}", "training option")
        if not 0 < self.digit_decay <= 1:
            raise OptionError("digit_decay", f"must be in (0, 1], got {self.digit_decay!r}", "training option")
        for name in ("ordinal_loss", "aux_regression", "target_noise"):
            if not getattr(self, name) >= 0:
                raise OptionError(name, f"must be >= 0, got {getattr(self, name)!r}", "training option")
        if not self.max_seconds >= 0:
            raise OptionError("max_seconds", f"must be >= 0, got {self.max_seconds!r}", "training option")
        if self.clip_norm < 0 or self.weight_decay < 0:
            raise ValueError("training options clip_norm and weight_decay must be >= 0")
        if self.bucket_by_length and self.task_sampling != "proportional":
            raise ValueError("training option bucket_by_length needs task_sampling 'proportional'")
        if not 0 <= self.ema_decay < 1:
            raise OptionError("ema_decay", f"must be in [0, 1), got {self.ema_decay!r}", "training option")
        if self.task_sampling == "weights" and not self.task_weights:
            raise OptionError("task_weights", "is needed with task_sampling 'weights' (TASK=W,...)", "training option")
        if self.task_weights and self.task_sampling != "weights":
            message = f"applies with task_sampling 'weights', got {self.task_sampling!r}"
            raise OptionError("task_weights", message, "training option")
        parse_task_weights(self.task_weights)  # a malformed one fails here, before any training
        if not self.task_temperature > 0:
            raise OptionError("task_temperature", f"must be > 0, got {self.task_temperature!r}", "training option")

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TrainConfig:
        check_options(cls, values, "training")
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
