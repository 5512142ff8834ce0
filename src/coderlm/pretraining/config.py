"""Pretraining options: the encoder's size, the tokenizer, the masking. Training options (steps, batch
size, learning rate, ...) are ``TrainConfig``'s, with the defaults in ``TRAINING_DEFAULTS``."""

from __future__ import annotations

import dataclasses
from typing import Any

from coderlm.options import OptionError, check_integers, check_options
from coderlm.text.bpe import PRETOKENIZERS

# TrainConfig defaults that differ for pretraining (BERT-style recipes: lower peak rate, weight decay,
# windows of similar length batched together, a validation loss now and then).
TRAINING_DEFAULTS: dict[str, Any] = {
    "steps": 2000,
    "learning_rate": 5e-4,
    "weight_decay": 0.01,
    "warmup_fraction": 0.05,
    "bucket_by_length": True,
    "eval_every": 500,
    "checkpoint_every": 500,
    "log_every": 25,
}
# TrainConfig fields that mean nothing without targets
TRAINING_SKIPPED = ("val_metric", "val_samples", "task_sampling", "task_temperature", "encoder_cache", "cache_dtype")
TRAINING_SKIPPED += ("cache_dir", "augment", "target_noise", "val_task_weights", "task_weights")


@dataclasses.dataclass(frozen=True)
class PretrainConfig:
    vocab_size: int = 8192  # BPE tokens learned over all the pretraining text
    pretokenize: str = "code"  # where merges stop: code (words, punctuation, digits), lines, lines+digits
    bpe_chars: int = 0  # learn the BPE from a seeded sample of documents of about this many characters; 0 = all
    max_len: int = 512  # tokens per training window; also the encoder's position limit
    hidden_size: int = 256  # encoder width
    layers: int = 4  # encoder blocks
    heads: int = 4  # attention heads; must divide hidden_size
    intermediate_size: int = 1024  # width of each block's MLP
    dropout: float = 0.1  # dropout inside the encoder while pretraining (fine-tuned: its hidden dropout)
    mask_rate: float = 0.15  # share of each window's tokens hidden
    mean_span: float = 3.0  # mean length of a hidden span (geometric); 1 hides single tokens, as BERT
    max_span: int = 10  # longest hidden span
    val_share: float = 0.02  # share of documents held out for the validation loss
    field: str = "text"  # the text field of JSONL/Parquet rows (e.g. "code" for the shared LeetCode files)

    def __post_init__(self) -> None:
        check_integers(self, ("bpe_chars",), "pretraining option", minimum=0)
        positive = ("vocab_size", "max_len", "hidden_size", "layers", "heads", "intermediate_size", "max_span")
        check_integers(self, positive, "pretraining option")
        if self.pretokenize not in PRETOKENIZERS:
            raise OptionError(
                "pretokenize",
                f"must be one of {', '.join(PRETOKENIZERS)}, got {self.pretokenize!r}",
                "pretraining option",
            )
        if self.vocab_size < 260:
            raise OptionError("vocab_size", f"must be >= 260 (bytes, specials, a merge), got {self.vocab_size}")
        if self.max_len < 16:
            raise OptionError("max_len", f"must be >= 16, got {self.max_len}", "pretraining option")
        if self.hidden_size % self.heads:
            raise OptionError("heads", f"{self.heads} must divide hidden_size={self.hidden_size}")
        if not 0 <= self.dropout < 1:
            raise OptionError("dropout", f"must be in [0, 1), got {self.dropout!r}", "pretraining option")
        if not 0 < self.mask_rate < 1:
            raise OptionError("mask_rate", f"must be in (0, 1), got {self.mask_rate!r}", "pretraining option")
        if self.mean_span < 1:
            raise OptionError("mean_span", f"must be >= 1, got {self.mean_span!r}", "pretraining option")
        if not 0 <= self.val_share < 0.5:
            raise OptionError("val_share", f"must be in [0, 0.5), got {self.val_share!r}", "pretraining option")

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> PretrainConfig:
        check_options(cls, values, "pretraining")
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
