"""A tiny regression objective for trainer tests: y = x @ w + noise, with dropout so RNG matters."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


class Toy(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 16), nn.Dropout(0.1), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return ((self.net(batch["x"]).squeeze(-1) - batch["y"]) ** 2).mean()


def toy_data(n: int = 64, dim: int = 8, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.normal(size=(n, dim)), dtype=torch.float32)
    y = x @ torch.arange(1.0, dim + 1) / dim + 0.1 * torch.tensor(rng.normal(size=n), dtype=torch.float32)
    return x, y


def collate_for(x: torch.Tensor, y: torch.Tensor):
    def collate(rows: np.ndarray) -> dict[str, torch.Tensor]:
        index = torch.as_tensor(np.asarray(rows, dtype=np.int64))
        return {"x": x[index], "y": y[index]}

    return collate
