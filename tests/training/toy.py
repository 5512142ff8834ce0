"""A tiny regression objective for trainer tests: y = x @ w + noise, with dropout so RNG matters; and a
``Trainer`` on it (``make_trainer``)."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from coderlm.training import BatchSampler, TrainConfig, Trainer


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


QUIET = {"progress": False}


def make_trainer(run_dir=None, val=False, seed=0, **options) -> Trainer:
    torch.manual_seed(seed)
    x, y = toy_data()
    config = TrainConfig(**{"steps": 20, "batch_size": 8, **QUIET, **options})
    collate = collate_for(x, y)
    val_loss = None
    if val:
        vx, vy = toy_data(32, seed=1)
        val_loss = lambda module: float(module(collate_for(vx, vy)(np.arange(32))))  # noqa: E731
    sampler = BatchSampler(len(x), config.batch_size, config.seed)
    return Trainer(Toy(), config, sampler, collate, val_loss=val_loss, run_dir=run_dir)
