"""Training tensors held once, cut into batches by row index; each batch trimmed to its longest row.

``TokenTensors`` serve input ids; ``CachedTensors`` serve a frozen pretrained encoder's cached states
instead (``encoder_cache``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from coderlm.text.bpe import TokenBatch, length_sorted_batches


class TokenTensors:
    """Padded input ids and mask, targets and loss weights, as tensors; ``batch(rows)`` gives the
    keyword arguments of a model's ``loss`` (ids, mask, targets, weights) on ``device``."""

    def __init__(
        self,
        tokens: TokenBatch,
        targets: np.ndarray,
        weights: np.ndarray,
        device: torch.device,
        aux_values: np.ndarray | None = None,
        jitter: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> None:
        """``aux_values`` (n, k), NaN where absent: the auxiliary regression's targets (``aux_regression``);
        ``jitter(rows)``: the rows' target ids spelled afresh for each batch (``target_noise``)."""
        self.jitter = jitter
        self.ids, self.mask = torch.from_numpy(tokens.ids), torch.from_numpy(tokens.mask)
        self.aux_values = None if aux_values is None else torch.from_numpy(aux_values.astype(np.float32))
        self.targets = torch.from_numpy(targets if targets.dtype == np.int64 else targets.astype(np.float32))
        self.weights = torch.from_numpy(weights.astype(np.float32))
        self.device = device

    def __len__(self) -> int:
        return len(self.ids)

    def batch(self, rows: np.ndarray) -> dict[str, torch.Tensor]:
        index = torch.from_numpy(np.asarray(rows, dtype=np.int64))
        width = max(int(self.mask[index].sum(1).max()), 1)
        targets = self.targets[index] if self.jitter is None else torch.from_numpy(self.jitter(rows))
        batch = {
            "ids": self.ids[index, :width].to(self.device),
            "mask": self.mask[index, :width].to(self.device),
            "targets": targets.to(self.device),
            "weights": self.weights[index].to(self.device),
        }
        if self.aux_values is not None:
            batch["aux_values"] = self.aux_values[index].to(self.device)
        return batch

    def mean_loss(self, objective: torch.nn.Module, batch_size: int = 64) -> float:
        """Weight-averaged loss over all rows (``objective(batch)`` is a weighted mean per batch)."""
        total = count = 0.0
        for rows in length_sorted_batches(self.mask.sum(1).numpy(), batch_size):
            batch = self.batch(rows)
            weight = float(batch["weights"].sum())
            total += float(objective(batch)) * weight
            count += weight
        return total / max(count, 1.0)


class CachedTensors(TokenTensors):
    """``TokenTensors`` whose batches carry cached encoder ``states`` (B, T, H) instead of input ids."""

    def __init__(
        self,
        tokens: TokenBatch,
        states: list[torch.Tensor],
        targets: np.ndarray,
        weights: np.ndarray,
        device: torch.device,
        aux_values: np.ndarray | None = None,
        jitter: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> None:
        super().__init__(tokens, targets, weights, device, aux_values, jitter)
        self.states = states

    def batch(self, rows: np.ndarray) -> dict[str, torch.Tensor]:
        batch = super().batch(rows)
        ids = batch.pop("ids")
        padded = torch.zeros(*ids.shape, self.states[0].shape[1], dtype=torch.float32)
        for i, row in enumerate(np.asarray(rows).tolist()):
            kept = self.states[row][: ids.shape[1]]
            padded[i, : kept.shape[0]] = kept.float()
        batch["states"] = padded.to(self.device)
        return batch
