"""Adapts a model with a ``loss(**batch)`` method to the trainer's ``forward(batch) -> loss``.

Going through ``forward`` is what lets DistributedDataParallel and torch.compile see the step.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from coderlm.model.transformer import weighted_mean


class LossOf(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.model.loss(**batch)


class NumberLoss(LossOf):
    """An RLM's training loss: the number tokens' negative log-likelihood, plus ``ordinal`` times each
    token's expected distance from the true one within its ordinal group (``ordinal_distance``).

    Likelihood alone treats every wrong digit alike: a first digit of 4 where 5 is true costs what 9
    costs. The ordinal term makes near misses cheaper, as a regression loss does.
    """

    def __init__(self, model: nn.Module, groups: Sequence[Sequence[int]] = (), ordinal: float = 0.0) -> None:
        super().__init__(model)
        self.ordinal = ordinal
        self.groups = [torch.tensor(list(g), dtype=torch.long) for g in groups]  # not state: checkpoints unchanged

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        if not self.ordinal:
            return self.model.loss(**batch)
        targets = batch["targets"]
        logits = self.model(batch.get("ids"), batch["mask"], targets, batch.get("states")).float()
        nll = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none").view_as(targets)
        distance = ordinal_distance(logits, targets, [g.to(logits.device) for g in self.groups])
        return weighted_mean(nll + self.ordinal * distance, batch.get("weights"))


def ordinal_distance(logits: torch.Tensor, targets: torch.Tensor, groups: Sequence[torch.Tensor]) -> torch.Tensor:
    """Per token (B, L): where the target is in a group (token ids in numeric order), the expected
    |rank(sampled) - rank(true)| under the softmax over that group's logits (the 1-Wasserstein distance
    to the true token: the sum over ranks of |CDF - step|); 0 elsewhere."""
    distance = torch.zeros(targets.shape, dtype=logits.dtype, device=logits.device)
    for ids in groups:
        hits = targets[..., None] == ids  # (B, L, G)
        inside = hits.any(-1)
        rank = hits.float().argmax(-1)  # (B, L)
        cdf = logits[..., ids].softmax(-1).cumsum(-1)[..., :-1]  # (B, L, G - 1)
        step = (torch.arange(len(ids) - 1, device=logits.device) >= rank[..., None]).to(logits.dtype)
        distance = distance + torch.where(inside, (cdf - step).abs().sum(-1), 0.0)
    return distance
