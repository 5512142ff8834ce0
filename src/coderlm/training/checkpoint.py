"""Checkpoints without pickle: tensors in safetensors, everything else in JSON.

A checkpoint is a folder ``checkpoints/step-000120/`` holding

* ``model.safetensors``: the weights;
* ``state.safetensors``: optimizer tensors and RNG states;
* ``trainer.json``: step, scheduler and optimizer scalars, the caller's extras.

Folders are written under a temporary name and renamed into place, and
``checkpoints/latest`` (a one-line file) is replaced atomically after, so a run
killed at any moment leaves either the previous or the new checkpoint, whole.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

TENSOR_KEY = "__tensor__"


def flatten_state(obj: Any, tensors: dict[str, torch.Tensor], prefix: str = "") -> Any:
    """Replace tensors inside nested dicts/lists by references, collecting them in ``tensors``."""
    if isinstance(obj, torch.Tensor):
        key = prefix or "tensor"
        tensors[key] = obj.detach().cpu().contiguous()
        return {TENSOR_KEY: key}
    if isinstance(obj, dict):
        return {"__dict__": [[k, flatten_state(v, tensors, f"{prefix}.{k}")] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return [flatten_state(v, tensors, f"{prefix}.{i}") for i, v in enumerate(obj)]
    return obj


def unflatten_state(obj: Any, tensors: dict[str, torch.Tensor]) -> Any:
    """Inverse of ``flatten_state``."""
    if isinstance(obj, dict) and TENSOR_KEY in obj:
        return tensors[obj[TENSOR_KEY]]
    if isinstance(obj, dict) and "__dict__" in obj:
        return {k: unflatten_state(v, tensors) for k, v in obj["__dict__"]}
    if isinstance(obj, list):
        return [unflatten_state(v, tensors) for v in obj]
    return obj


def save_checkpoint(
    folder: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    step: int,
    extra: dict[str, Any],
    averaged: list[torch.Tensor] | None = None,
) -> Path:
    """Write checkpoint ``folder`` atomically (replacing an older one of the same name).

    ``averaged``: the moving average of the trainable weights (``ema_decay``), kept beside them.
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        weights = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
        save_file(weights, str(staging / "model.safetensors"))
        tensors: dict[str, torch.Tensor] = {}
        state = {
            "step": step,
            "optimizer": flatten_state(optimizer.state_dict(), tensors, "optimizer"),
            "scheduler": flatten_state(scheduler.state_dict(), tensors, "scheduler"),
            "rng": flatten_state(_rng_states(), tensors, "rng"),
            "averaged": flatten_state(averaged, tensors, "averaged") if averaged is not None else None,
            "extra": extra,
        }
        save_file(tensors, str(staging / "state.safetensors"))
        (staging / "trainer.json").write_text(json.dumps(state) + "\n")
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(staging, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def load_checkpoint(
    folder: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer | None = None, scheduler: Any = None
) -> dict[str, Any]:
    """Restore weights (and optimizer, scheduler, RNG when given); return ``{"step", "extra", "averaged"}``."""
    for name in ("model.safetensors", "state.safetensors", "trainer.json"):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"checkpoint {folder} is incomplete: {name} is missing")
    model.load_state_dict(load_file(str(folder / "model.safetensors")))
    state = json.loads((folder / "trainer.json").read_text())
    tensors = load_file(str(folder / "state.safetensors"))
    if optimizer is not None:
        optimizer.load_state_dict(unflatten_state(state["optimizer"], tensors))
    if scheduler is not None:
        scheduler.load_state_dict(unflatten_state(state["scheduler"], tensors))
        _set_rng_states(unflatten_state(state["rng"], tensors))
    averaged = state.get("averaged")
    averaged = unflatten_state(averaged, tensors) if averaged is not None else None
    return {"step": state["step"], "extra": state["extra"], "averaged": averaged}


def _rng_states() -> dict[str, Any]:
    states: dict[str, Any] = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def _set_rng_states(states: dict[str, Any]) -> None:
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])
