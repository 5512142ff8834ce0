"""Adapts a model with a ``loss(**batch)`` method to the trainer's ``forward(batch) -> loss``.

Going through ``forward`` is what lets DistributedDataParallel and torch.compile see the step.
"""

from __future__ import annotations

import torch
from torch import nn


class LossOf(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.model.loss(**batch)
