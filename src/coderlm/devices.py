"""Device names: "cpu", "cuda", "cuda:1", or "auto" (CUDA when available)."""

from __future__ import annotations

import torch


def resolve_device(name: str) -> str:
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} requested but CUDA is not available (use 'cpu' or 'auto')")
    return name
