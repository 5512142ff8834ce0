"""Adapts a model with a ``loss(**batch)`` method to the trainer's ``forward(batch) -> loss``.

Going through ``forward`` is what lets DistributedDataParallel and torch.compile see the step.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from coderlm.model.transformer import masked_mean, weighted_mean


class LossOf(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.model.loss(**batch)


class NumberLoss(LossOf):
    """An RLM's training loss: the number tokens' negative log-likelihood, plus ``ordinal`` times each
    token's expected distance from the true one within its ordinal group (``ordinal_distance``), plus
    ``regression`` times the mean squared error of a linear head on the pooled encoder states
    (``regression_outputs`` objectives; training option ``aux_regression``).

    Likelihood alone treats every wrong digit alike: a first digit of 4 where 5 is true costs what 9
    costs. The ordinal term makes near misses cheaper, as a regression loss does. The auxiliary head
    asks the encoder for what a regression head's encoder learns, a state ordered by magnitude, while
    the decoder still writes the numbers; it lives here, not in the model: it is trained (and
    checkpointed) with the objective and dropped after, so the model's files do not change. Batches
    without ``aux_values`` (validation) get the number loss alone.
    """

    def __init__(
        self,
        model: nn.Module,
        groups: Sequence[Sequence[int]] = (),
        ordinal: float = 0.0,
        regression: float = 0.0,
        regression_outputs: int = 0,
    ) -> None:
        super().__init__(model)
        self.ordinal = ordinal
        self.groups = [torch.tensor(list(g), dtype=torch.long) for g in groups]  # not state: checkpoints unchanged
        self.regression = regression
        if regression:
            dim = model.cfg.encoder_dim
            self.aux_head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, regression_outputs))
            nn.init.normal_(self.aux_head[1].weight, std=0.02)
            nn.init.zeros_(self.aux_head[1].bias)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        auxiliary = self.regression and "aux_values" in batch
        if not self.ordinal and not auxiliary:
            return self.model.loss(**batch)  # aux_values come only with a regression weight
        targets, mask = batch["targets"], batch["mask"]
        states = self.model.encoder_states(batch.get("ids"), mask, batch.get("states"))
        logits = self.model.decode_teacher_forced(self.model.memory(states, mask), targets).float()
        per_token = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none").view_as(targets)
        if self.ordinal:
            groups = [g.to(logits.device) for g in self.groups]
            per_token = per_token + self.ordinal * ordinal_distance(logits, targets, groups)
        loss = weighted_mean(per_token, batch.get("weights"))
        if auxiliary:
            values = batch["aux_values"]
            present = ~values.isnan()
            predicted = self.aux_head(masked_mean(states, mask)).float()
            squared = (predicted - values.nan_to_num()).square()
            loss = loss + self.regression * weighted_mean(squared, present)
        return loss


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
