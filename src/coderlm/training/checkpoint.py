"""A run's saved state, without pickle (tensors in safetensors, everything else in JSON):
step checkpoints for exact resume, and the best-validating weights training returns.

A checkpoint is a folder ``checkpoints/step-000120/`` holding

* ``model.safetensors``: the weights;
* ``state.safetensors``: optimizer tensors and RNG states;
* ``trainer.json``: step, scheduler and optimizer scalars, the caller's extras.

Folders are written under a temporary name and renamed into place, and
``checkpoints/latest`` (a one-line file) is replaced atomically after, so a run
killed at any moment leaves either the previous or the new checkpoint, whole. ``Checkpoints``
keeps the newest few of them.

``BestWeights`` keeps the ``average_best`` best-validating weight sets and returns their mean; in a
run folder it writes ``best/model.safetensors`` (the mean: what training returns) and, keeping
several, each one (``best/step-NNNNNNN.safetensors``) and ``best/kept.json``, so a resumed run
keeps the same ones.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save, save_file

from coderlm.atomic import write_atomic

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
        save_file(unshared(model.state_dict()), str(staging / "model.safetensors"))
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


def unshared(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``state`` on the CPU with no two tensors sharing memory (safetensors refuses tied weights, e.g. a
    masked-LM head tied to the embeddings); loading writes the same values into the tied tensor twice."""
    seen: set[int] = set()
    out = {}
    for name, value in state.items():
        tensor = value.detach().cpu().contiguous()
        pointer = tensor.untyped_storage().data_ptr()
        out[name] = tensor.clone() if pointer in seen else tensor
        seen.add(pointer)
    return out


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


class Checkpoints:
    """The step checkpoints of a run folder: ``folder/step-NNNNNNN/`` and the ``latest`` pointer."""

    def __init__(self, folder: Path, keep: int) -> None:
        self.folder, self.keep = folder, keep

    def save(
        self,
        model: torch.nn.Module,
        optimizer: torch.optim.Optimizer,
        scheduler: Any,
        step: int,
        extra: dict[str, Any],
        averaged: list[torch.Tensor] | None = None,
    ) -> None:
        """Write step ``step``, point ``latest`` at it, remove all but the newest ``keep``."""
        folder = self.folder / f"step-{step:07d}"
        save_checkpoint(folder, model, optimizer, scheduler, step, extra, averaged=averaged)
        write_atomic(self.folder / "latest", folder.name + "\n")
        old = sorted(p for p in self.folder.glob("step-*") if p.is_dir())
        for stale in old[: -self.keep]:
            shutil.rmtree(stale, ignore_errors=True)

    def load_latest(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, scheduler: Any) -> dict[str, Any]:
        """Restore the newest checkpoint (see ``load_checkpoint``); a clear error when there is none."""
        latest = self.folder / "latest"
        if not latest.is_file():
            raise FileNotFoundError(f"nothing to resume: {latest} does not exist")
        return load_checkpoint(self.folder / latest.read_text().strip(), model, optimizer, scheduler)


@dataclasses.dataclass
class Kept:
    val: float
    step: int | None  # None: kept by a version that did not record it
    state: dict[str, torch.Tensor]


def average_states(states: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Uniform average of floating-point tensors; other tensors (integer buffers) from the first."""
    if len(states) == 1:
        return states[0]
    first = states[0]
    return {
        name: torch.stack([s[name].float() for s in states]).mean(0).to(value.dtype)
        if value.is_floating_point()
        else value
        for name, value in first.items()
    }


class BestWeights:
    """The ``size`` best-validating weight sets so far (lowest validation loss; on a tie the earlier stay).

    ``folder``: where they are written (when ``write``) and read back on resume; None keeps them in memory.
    """

    def __init__(self, size: int, folder: Path | None = None, write: bool = True) -> None:
        self.size, self.folder, self.write = size, folder, write
        self.kept: list[Kept] = []

    @property
    def steps(self) -> list[int | None]:
        return [entry.step for entry in self.kept]

    def offer(self, val: float, step: int, model: torch.nn.Module) -> None:
        """Keep ``model``'s current weights if they are among the best so far."""
        kept, size = self.kept, self.size
        if len(kept) == size and not val < kept[-1].val:
            return
        state = {name: value.detach().clone() for name, value in model.state_dict().items()}
        kept.append(Kept(val, step, state))
        kept.sort(key=lambda entry: entry.val)  # stable: ties keep the earlier first
        dropped = kept[size:]
        del kept[size:]
        if self.folder is None or not self.write:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        if size > 1:
            _save_state(state, self.folder / _kept_file(step))
        _save_state(self.average(), self.folder / "model.safetensors")
        entries = [
            {"step": e.step, "val": e.val, "file": _kept_file(e.step) if size > 1 else "model.safetensors"}
            for e in kept
        ]
        write_atomic(self.folder / "kept.json", json.dumps({"average_best": size, "kept": entries}) + "\n")
        for entry in dropped if size > 1 else ():
            (self.folder / _kept_file(entry.step)).unlink(missing_ok=True)

    def average(self) -> dict[str, torch.Tensor]:
        """The uniform mean of the kept weights."""
        return average_states([entry.state for entry in self.kept])

    def load(self, best_val: float | None, device: str | torch.device, until: int | None = None) -> None:
        """The kept weights of a run folder, for resume; before ``kept.json``: the best one. ``until``: the step
        resumed from; weights validated after it (a run stopped between a validation and its checkpoint) are
        dropped, as the resumed run validates that step again."""
        assert self.folder is not None
        if (self.folder / "kept.json").is_file():
            saved = json.loads((self.folder / "kept.json").read_text())
        elif best_val is not None and (self.folder / "model.safetensors").is_file():
            saved = {"average_best": 1, "kept": [{"step": None, "val": best_val, "file": "model.safetensors"}]}
        else:
            self.kept = []  # nothing validated before the checkpoint
            return
        if saved["average_best"] != self.size:
            raise ValueError(
                f"cannot resume {self.folder.parent}: average_best was {saved['average_best']} when it was "
                "written; resume with the same setting"
            )
        entries = [e for e in saved["kept"] if until is None or e["step"] is None or e["step"] <= until]
        self.kept = [
            Kept(e["val"], e["step"], load_file(str(self.folder / e["file"]), device=str(device))) for e in entries
        ]


def _save_state(state: dict[str, torch.Tensor], path: Path) -> None:
    write_atomic(path, save({k: v.cpu().contiguous() for k, v in state.items()}))


def _kept_file(step: int | None) -> str:
    return f"step-{step:07d}.safetensors"
