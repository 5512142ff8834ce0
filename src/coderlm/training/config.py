"""Training options: one frozen dataclass, every field documented where declared."""

from __future__ import annotations

import dataclasses
from typing import Any

from coderlm.options import check_options


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    steps: int = 1000  # optimizer steps
    batch_size: int = 32  # examples per step
    learning_rate: float = 1e-3  # peak learning rate (paper: 1e-3 pretraining, 5e-5 fine-tuning)
    weight_decay: float = 0.0  # AdamW weight decay
    warmup_fraction: float = 0.1  # share of steps with linear warm-up, then cosine decay to 0
    clip_norm: float = 2.0  # gradient clipping at this global norm; 0 disables it
    seed: int = 0  # seeds weights, batch order and dropout

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"training option {name} must be a positive integer, got {value!r}")
        if not self.learning_rate > 0:
            raise ValueError(f"training option learning_rate must be > 0, got {self.learning_rate!r}")
        if not 0 <= self.warmup_fraction < 1:
            raise ValueError(f"training option warmup_fraction must be in [0, 1), got {self.warmup_fraction!r}")
        if self.clip_norm < 0 or self.weight_decay < 0:
            raise ValueError("training options clip_norm and weight_decay must be >= 0")

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TrainConfig:
        check_options(cls, values, "training")
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
