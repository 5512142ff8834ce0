"""Optimizers and the learning-rate schedule: AdamW or Adafactor, linear warm-up then cosine decay."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from coderlm.training.config import TrainConfig


def warmup_cosine(steps: int, warmup_fraction: float) -> Callable[[int], float]:
    """Learning-rate multiplier: 0 -> 1 linearly over the warm-up, then cosine to 0."""
    warmup = int(steps * warmup_fraction)

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, steps - warmup)
        return 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))

    return factor


def build_optimizer(params: list[nn.Parameter], config: TrainConfig) -> torch.optim.Optimizer:
    if config.optimizer == "adafactor":
        return torch.optim.Adafactor(params, lr=config.learning_rate, weight_decay=config.weight_decay)
    return torch.optim.AdamW(params, lr=config.learning_rate, weight_decay=config.weight_decay)


def build_scheduler(
    optimizer: torch.optim.Optimizer, config: TrainConfig, elapsed: Callable[[], float] | None = None
) -> torch.optim.lr_scheduler.LambdaLR:
    """Warm-up then cosine over ``config.steps``; with ``config.max_seconds`` (and ``elapsed``, the seconds
    trained so far) over whichever runs out first, steps or seconds, so a run cut by time still anneals."""
    factor = warmup_cosine(config.steps, config.warmup_fraction)
    if not config.max_seconds or elapsed is None:
        return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)

    def by_time(step: int) -> float:
        share = max(step / config.steps, elapsed() / config.max_seconds)
        return factor(min(round(share * config.steps), config.steps))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, by_time)
