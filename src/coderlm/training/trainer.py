"""The training loop. It knows nothing of the model: it optimizes any module whose
``forward(batch)`` returns a scalar loss, over batches that ``collate(rows)`` builds.

Features: AdamW or Adafactor; linear warm-up then cosine decay; clipping at a global
norm; gradient accumulation; an exponential moving average of the weights (validated,
kept and returned in place of the live ones); validation loss every N steps with early
stopping and best-weights restore (or the average of the N best-validating weights); atomic
checkpoints every N steps and at the end, and exact resume from the latest; ``metrics.jsonl``
in the run folder; a progress bar with loss, examples/s and ETA; bf16 autocast and
``torch.compile`` by option; DDP when launched by ``torchrun``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save
from torch import nn

from coderlm.atomic import write_atomic
from coderlm.training.checkpoint import load_checkpoint, save_checkpoint
from coderlm.training.config import TrainConfig
from coderlm.training.distributed import DistInfo, barrier, mean_across_ranks, setup_distributed
from coderlm.training.sampling import BatchSampler

METRICS_FILE = "metrics.jsonl"
# Fault injection for tests: the process SIGKILLs itself before running this step (1-based).
KILL_AT_STEP_ENV = "CODERLM_KILL_AT_STEP"


def warmup_cosine(steps: int, warmup_fraction: float) -> Callable[[int], float]:
    """Learning-rate multiplier: 0 -> 1 linearly over the warm-up, then cosine to 0."""
    warmup = int(steps * warmup_fraction)

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, steps - warmup)
        return 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))

    return factor


def build_optimizer(params: list[nn.Parameter], config: TrainConfig) -> torch.optim.Optimizer:
    if config.optimizer == "adafactor":
        return torch.optim.Adafactor(params, lr=config.learning_rate, weight_decay=config.weight_decay)
    return torch.optim.AdamW(params, lr=config.learning_rate, weight_decay=config.weight_decay)


@dataclasses.dataclass
class TrainResult:
    step: int  # optimizer steps completed
    losses: list[float]  # training loss of each step run in this call
    val_losses: list[tuple[int, float]]  # (step, validation loss) of each evaluation
    best_val_loss: float | None
    stopped_early: bool
    seconds: float
    kept_steps: list[int | None] = dataclasses.field(default_factory=list)  # weights returned (averaged), best first


@dataclasses.dataclass
class _Kept:
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


class Trainer:
    def __init__(
        self,
        objective: nn.Module,
        config: TrainConfig,
        sampler: BatchSampler,
        collate: Callable[[np.ndarray], Any],
        *,
        val_loss: Callable[[nn.Module], float] | None = None,
        run_dir: str | Path | None = None,
        device: str | torch.device = "cpu",
        callbacks: tuple[Callable[[dict], None], ...] = (),
    ) -> None:
        self.objective = objective
        self.config = config
        self.sampler = sampler
        self.collate = collate
        self.val_loss = val_loss
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.device = torch.device(device)
        self.callbacks = callbacks

    # ------------------------------------------------------------------ run
    def run(self, resume: bool = False) -> TrainResult:
        cfg, device = self.config, self.device
        dist = setup_distributed(device)
        self.objective.to(device)
        params = [p for p in self.objective.parameters() if p.requires_grad]
        optimizer = build_optimizer(params, cfg)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_cosine(cfg.steps, cfg.warmup_fraction))
        torch.manual_seed(cfg.seed + dist.rank)
        start, best, bad_evals = 0, None, 0
        self._params = params
        self._kept: list[_Kept] = []
        self._ema = [p.detach().clone() for p in params] if cfg.ema_decay else None
        if resume:
            start, best, bad_evals = self._resume(optimizer, scheduler)
        module = self._wrap(dist)

        result = TrainResult(start, [], [], best, False, 0.0)
        began = last_log = time.perf_counter()
        pending: list[float] = []
        bar = self._progress_bar(start, dist)
        micro = cfg.batch_size // cfg.grad_accum
        self.objective.train()
        kill_at = int(os.environ.get(KILL_AT_STEP_ENV, "0"))
        for step in range(start, cfg.steps):
            if step + 1 == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            rows = self.sampler.batch(step)
            total = 0.0
            for i in range(cfg.grad_accum):
                part = rows[i * micro : (i + 1) * micro][dist.rank :: dist.world_size]
                sync = i == cfg.grad_accum - 1 or not dist.enabled
                with self._autocast(), contextlib.nullcontext() if sync else module.no_sync():
                    loss = module(self.collate(part)) / cfg.grad_accum
                loss.backward()
                total += loss.item()
            if cfg.clip_norm > 0:
                torch.nn.utils.clip_grad_norm_(params, cfg.clip_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            self._update_average(step)
            loss_value = mean_across_ranks(total, dist, device)
            result.losses.append(loss_value)
            pending.append(loss_value)
            result.step = step + 1
            done = result.step == cfg.steps

            record: dict[str, Any] = {}
            if self.val_loss is not None and (done or (cfg.eval_every and result.step % cfg.eval_every == 0)):
                with self._averaged():
                    val = self._evaluate()
                    if best is None or val < best:
                        best, bad_evals = val, 0
                    else:
                        bad_evals += 1
                    self._keep(val, result.step, dist)
                result.val_losses.append((result.step, val))
                record["val_loss"] = val
                result.best_val_loss = best
                result.stopped_early = bool(cfg.patience) and bad_evals >= cfg.patience and not done
            if record or done or result.stopped_early or result.step % cfg.log_every == 0:
                now = time.perf_counter()
                record = {
                    "step": result.step,
                    "loss": float(np.mean(pending)),
                    "lr": scheduler.get_last_lr()[0],
                    "examples_per_s": len(pending) * cfg.batch_size / max(now - last_log, 1e-9),
                    **record,
                }
                pending, last_log = [], now
                self._log(record, dist)
                if bar is not None:
                    bar.set_postfix(loss=f"{record['loss']:.4f}", ex_s=f"{record['examples_per_s']:.0f}")
            if bar is not None:
                bar.update(1)
            if self.run_dir is not None and (
                done or result.stopped_early or (cfg.checkpoint_every and result.step % cfg.checkpoint_every == 0)
            ):
                self._checkpoint(optimizer, scheduler, result.step, best, bad_evals, dist)
            if result.stopped_early:
                break
        if bar is not None:
            bar.close()
        if self._ema is not None:  # the average is the model; the best one, with validation
            self._set_params(self._ema)
        self._restore_best()
        result.kept_steps = [kept.step for kept in self._kept]
        self.objective.eval()
        result.seconds = time.perf_counter() - began
        return result

    # ------------------------------------------------------------- helpers
    def _wrap(self, dist: DistInfo) -> nn.Module:
        module: nn.Module = self.objective
        if dist.enabled:
            ids = [dist.local_rank] if self.device.type == "cuda" else None
            module = nn.parallel.DistributedDataParallel(module, device_ids=ids)
        if self.config.compile:
            module = torch.compile(module)
        return module

    def _autocast(self) -> contextlib.AbstractContextManager:
        if self.config.precision == "bf16":
            return torch.autocast(self.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _update_average(self, step: int) -> None:
        """Exponential moving average of the trainable weights; its decay ramps up over the first
        steps ((1 + t) / (10 + t)) so that the random initialization is forgotten quickly."""
        if self._ema is None:
            return
        decay = min(self.config.ema_decay, (1 + step) / (10 + step))
        with torch.no_grad():
            torch._foreach_lerp_(self._ema, [p.detach() for p in self._params], 1.0 - decay)

    @contextlib.contextmanager
    def _averaged(self):
        """Inside: the model holds the averaged weights (for validation and the best copy)."""
        if self._ema is None:
            yield
            return
        live = [p.detach().clone() for p in self._params]
        self._set_params(self._ema)
        try:
            yield
        finally:
            self._set_params(live)

    def _set_params(self, values: list[torch.Tensor]) -> None:
        with torch.no_grad():
            torch._foreach_copy_(self._params, values)

    def _evaluate(self) -> float:
        assert self.val_loss is not None
        self.objective.eval()
        with torch.no_grad(), self._autocast():
            value = float(self.val_loss(self.objective))
        self.objective.train()
        return value

    def _progress_bar(self, start: int, dist: DistInfo):
        if not self.config.progress or not dist.is_main:
            return None
        from tqdm.auto import tqdm

        return tqdm(total=self.config.steps, initial=start, desc="train", unit="step", dynamic_ncols=True)

    def _log(self, record: dict, dist: DistInfo) -> None:
        if not dist.is_main:
            return
        if self.run_dir is not None:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            with open(self.run_dir / METRICS_FILE, "a") as f:
                f.write(json.dumps(record) + "\n")
        for callback in self.callbacks:
            callback(record)

    # ---------------------------------------------------- checkpoints, best
    @property
    def _checkpoints(self) -> Path:
        assert self.run_dir is not None
        return self.run_dir / "checkpoints"

    def _checkpoint(self, optimizer, scheduler, step: int, best, bad_evals: int, dist: DistInfo) -> None:
        if dist.is_main:
            folder = self._checkpoints / f"step-{step:07d}"
            extra = {"best_val_loss": best, "bad_evals": bad_evals}
            save_checkpoint(folder, self.objective, optimizer, scheduler, step, extra, averaged=self._ema)
            write_atomic(self._checkpoints / "latest", folder.name + "\n")
            old = sorted(p for p in self._checkpoints.glob("step-*") if p.is_dir())
            for stale in old[: -self.config.keep_checkpoints]:
                shutil.rmtree(stale, ignore_errors=True)
        barrier(dist)

    def _resume(self, optimizer, scheduler) -> tuple[int, float | None, int]:
        if self.run_dir is None:
            raise ValueError("resume needs a run folder")
        latest = self._checkpoints / "latest"
        if not latest.is_file():
            raise FileNotFoundError(f"nothing to resume: {latest} does not exist")
        state = load_checkpoint(self._checkpoints / latest.read_text().strip(), self.objective, optimizer, scheduler)
        step = state["step"]
        if (state["averaged"] is None) != (self._ema is None):
            raise ValueError(
                f"cannot resume {latest.parent}: ema_decay was {'on' if self._ema is None else 'off'} "
                "when the checkpoint was written; resume with the same setting"
            )
        if self._ema is not None:
            self._ema = [value.to(p.device) for p, value in zip(self._params, state["averaged"], strict=True)]
        metrics = self.run_dir / METRICS_FILE
        if metrics.is_file():  # drop lines logged after the checkpoint: those steps run again
            kept = [line for line in metrics.read_text().splitlines() if line and json.loads(line)["step"] <= step]
            write_atomic(metrics, "".join(line + "\n" for line in kept))
        self._kept = self._load_kept(state["extra"].get("best_val_loss"))
        return step, state["extra"].get("best_val_loss"), state["extra"].get("bad_evals", 0)

    @property
    def _best_dir(self) -> Path:
        assert self.run_dir is not None
        return self.run_dir / "best"

    def _keep(self, val: float, step: int, dist: DistInfo) -> None:
        """Keep the current weights if they are among the ``average_best`` best-validating so far
        (on a tie, the earlier stay). A run folder gets them too, for resume: ``best/model.safetensors``
        (their average: what training returns) and, averaging several, each one and ``kept.json``."""
        kept, size = self._kept, self.config.average_best
        if len(kept) == size and not val < kept[-1].val:
            return
        state = {name: value.detach().clone() for name, value in self.objective.state_dict().items()}
        kept.append(_Kept(val, step, state))
        kept.sort(key=lambda entry: entry.val)  # stable: ties keep the earlier first
        dropped = kept[size:]
        del kept[size:]
        if self.run_dir is None or not dist.is_main:
            return
        folder = self._best_dir
        folder.mkdir(parents=True, exist_ok=True)
        if size > 1:
            self._save_state(state, folder / _kept_file(step))
        self._save_state(average_states([entry.state for entry in kept]), folder / "model.safetensors")
        entries = [
            {"step": e.step, "val": e.val, "file": _kept_file(e.step) if size > 1 else "model.safetensors"}
            for e in kept
        ]
        write_atomic(folder / "kept.json", json.dumps({"average_best": size, "kept": entries}) + "\n")
        for entry in dropped if size > 1 else ():
            (folder / _kept_file(entry.step)).unlink(missing_ok=True)

    @staticmethod
    def _save_state(state: dict[str, torch.Tensor], path: Path) -> None:
        write_atomic(path, save({k: v.cpu().contiguous() for k, v in state.items()}))

    def _load_kept(self, best_val: float | None) -> list[_Kept]:
        """The kept weights of a run folder, for resume; before ``kept.json``: the best one."""
        folder = self._best_dir
        if (folder / "kept.json").is_file():
            saved = json.loads((folder / "kept.json").read_text())
        elif best_val is not None and (folder / "model.safetensors").is_file():
            saved = {"average_best": 1, "kept": [{"step": None, "val": best_val, "file": "model.safetensors"}]}
        else:
            return []  # nothing validated before the checkpoint
        if saved["average_best"] != self.config.average_best:
            raise ValueError(
                f"cannot resume {self.run_dir}: average_best was {saved['average_best']} when it was "
                "written; resume with the same setting"
            )
        return [
            _Kept(e["val"], e["step"], load_file(str(folder / e["file"]), device=str(self.device)))
            for e in saved["kept"]
        ]

    def _restore_best(self) -> None:
        if self.val_loss is not None and self._kept:
            self.objective.load_state_dict(average_states([entry.state for entry in self._kept]))


def _kept_file(step: int | None) -> str:
    return f"step-{step:07d}.safetensors"
