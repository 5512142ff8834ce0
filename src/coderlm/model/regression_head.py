"""The paper's ablation baseline: the same encoder, a pooled state, a linear head, MSE.

Targets can be normalized per task and objective to [0, 1] with the min and max
seen in training (``TargetScaler``); without it the head regresses raw values.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from coderlm.model.config import ModelConfig
from coderlm.model.transformer import Encoder, _init_weights


class RegressionHead(nn.Module):
    """Encoder -> masked mean over tokens -> LayerNorm -> Linear(num_outputs)."""

    def __init__(self, cfg: ModelConfig, num_outputs: int) -> None:
        super().__init__()
        self.cfg = cfg
        self.encoder = Encoder(cfg)
        self.ln = nn.LayerNorm(cfg.encoder_dim)
        self.head = nn.Linear(cfg.encoder_dim, num_outputs)
        self.apply(_init_weights)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """ids, mask (B, T) -> predictions (B, num_outputs)."""
        states = self.encoder(ids, mask)  # (B, T, De)
        weights = mask.unsqueeze(-1).to(states.dtype)
        pooled = (states * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        return self.head(self.ln(pooled))

    def loss(
        self, ids: torch.Tensor, mask: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Mean squared error; ``weights`` (B, k) masks out missing objectives."""
        error = F.mse_loss(self(ids, mask).float(), targets.float(), reduction="none")
        if weights is None:
            return error.mean()
        return (error * weights).sum() / weights.sum().clamp(min=1.0)


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
