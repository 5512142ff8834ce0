"""A training loop that knows nothing of the model: it calls ``loss_fn(batch)``.

AdamW, linear warm-up then cosine decay, gradient clipping at a global norm.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import torch

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


def train(
    parameters: list[torch.nn.Parameter],
    loss_fn: Callable[[Any], torch.Tensor],
    batches: Iterator[Any],
    config: TrainConfig,
    on_step: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Run ``config.steps`` optimizer steps; return the loss of each."""
    optimizer = torch.optim.AdamW(parameters, lr=config.learning_rate, weight_decay=config.weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_cosine(config.steps, config.warmup_fraction))
    losses = []
    for step in range(config.steps):
        loss = loss_fn(next(batches))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if config.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(parameters, config.clip_norm)
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if on_step is not None:
            on_step(step, losses[-1])
    return losses
