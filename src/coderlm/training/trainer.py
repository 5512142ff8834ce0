"""The training loop. It knows nothing of the model: it optimizes any module whose
``forward(batch)`` returns a scalar loss, over batches that ``collate(rows)`` builds.

Each step: the sampler's rows, split into ``grad_accum`` micro-batches (and over DDP ranks),
forward, backward, clip, optimizer and schedule step (``optim``), the moving average of the
weights (``moving_average``). Every ``eval_every`` steps and at the end, ``val_loss`` scores the
(averaged) weights: the best ones are kept (``checkpoint.BestWeights``) and returned at the end,
and ``patience`` evaluations without improvement stop the run. Every ``checkpoint_every`` steps
and at the end, a checkpoint goes into the run folder (``checkpoint.Checkpoints``), from which
``run(resume=True)`` continues exactly. Records go to the callbacks (``metrics.jsonl``, the
progress bar). bf16 autocast and ``torch.compile`` by option; DDP when launched by ``torchrun``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from coderlm.training.callbacks import Callback, MetricsLog, ProgressBar
from coderlm.training.checkpoint import BestWeights, Checkpoints
from coderlm.training.config import TrainConfig
from coderlm.training.distributed import DistInfo, barrier, mean_across_ranks, setup_distributed
from coderlm.training.moving_average import MovingAverage, copy_into
from coderlm.training.optim import build_optimizer, build_scheduler
from coderlm.training.sampling import BatchSampler

log = logging.getLogger("coderlm")


@dataclasses.dataclass
class TrainResult:
    step: int  # optimizer steps completed
    losses: list[float]  # training loss of each step run in this call
    val_losses: list[tuple[int, float]]  # (step, validation loss) of each evaluation
    best_val_loss: float | None
    stopped_early: bool
    seconds: float  # seconds trained, a resumed run's earlier calls included
    kept_steps: list[int | None] = dataclasses.field(default_factory=list)  # weights returned (averaged), best first
    out_of_time: bool = False  # stopped by max_seconds before its last step
    # ranking validation: (step, each task's rho per objective) of each evaluation of this call
    val_rankings: list[tuple[int, dict[str, float]]] = dataclasses.field(default_factory=list)

    def report(self, val_metric: str | None) -> dict[str, Any]:
        """The run as a JSON-ready record (a fit report's training part)."""
        return {
            "steps": self.step,
            "train_seconds": round(self.seconds, 3),
            "val_metric": val_metric,
            "best_val_loss": self.best_val_loss,
            # the weights kept are best_step's; None when no validation ran or (resumed) it came before
            "best_step": next((step for step, loss in self.val_losses if loss == self.best_val_loss), None),
            "kept_steps": self.kept_steps,  # the weights returned (averaged with average_best > 1), best first
            "val_losses": [[step, loss] for step, loss in self.val_losses],
            "val_rankings": [[step, rankings] for step, rankings in self.val_rankings],
            "stopped_early": self.stopped_early,
            "out_of_time": self.out_of_time,
            "best_at_end": self.best_at_end(),
        }

    def best_at_end(self) -> bool:
        """Whether the weights kept are the last of several evaluations' in a run that ran all its steps: the
        model was still improving when its schedule ended, and more steps may rank better (docs/encoders.md)."""
        if len(self.val_losses) < 2 or self.stopped_early or self.out_of_time or self.best_val_loss is None:
            return False
        return self.val_losses[-1][1] == self.best_val_loss and self.val_losses[-1][0] == self.step

    def warn_if_still_improving(self) -> None:
        """Log a warning when ``best_at_end``: the run's schedule was too short for it."""
        if self.best_at_end():
            log.warning(
                "the weights kept are the last evaluation's (step %d of %d): the model was still improving when "
                "its schedule ended; more steps may rank better (docs/encoders.md, 'enough steps')",
                self.step,
                self.step,
            )


@dataclasses.dataclass
class Clock:
    """Seconds trained: those of earlier calls (a resumed run's) plus this call's since ``began``."""

    began: float = dataclasses.field(default_factory=time.perf_counter)
    before: float = 0.0

    def elapsed(self) -> float:
        return self.before + time.perf_counter() - self.began


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
        callbacks: Sequence[Callback] = (),
    ) -> None:
        self.objective = objective
        self.config = config
        self.sampler = sampler
        self.collate = collate
        self.val_loss = val_loss
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.device = torch.device(device)
        self.callbacks = list(callbacks)

    def run(self, resume: bool = False) -> TrainResult:
        cfg, device = self.config, self.device
        dist = setup_distributed(device)
        self.objective.to(device)
        params = [p for p in self.objective.parameters() if p.requires_grad]
        optimizer = build_optimizer(params, cfg)
        clock = Clock()
        scheduler = build_scheduler(optimizer, cfg, clock.elapsed)
        torch.manual_seed(cfg.seed + dist.rank)
        average = MovingAverage(params, cfg.ema_decay) if cfg.ema_decay else None
        run = self.run_dir
        checkpoints = Checkpoints(run / "checkpoints", cfg.keep_checkpoints) if run is not None else None
        best = BestWeights(cfg.average_best, run / "best" if run is not None else None, write=dist.is_main)
        start, best_val, bad_evals = 0, None, 0
        if resume:
            start, best_val, bad_evals, clock.before = self._resume(checkpoints, optimizer, scheduler, average, best)
        module = self._wrap(dist)
        callbacks = self._callbacks(dist)

        result = TrainResult(start, [], [], best_val, False, 0.0)
        last_log = clock.began = time.perf_counter()
        pending: list[float] = []
        micro = cfg.batch_size // cfg.grad_accum
        for callback in callbacks:
            callback.on_start(start, cfg.steps)
        self.objective.train()
        for step in range(start, cfg.steps):
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
            if average is not None:
                average.update(step)
            loss_value = mean_across_ranks(total, dist, device)
            result.losses.append(loss_value)
            pending.append(loss_value)
            result.step = step + 1
            result.out_of_time = result.step < cfg.steps and self._out_of_time(clock, dist)
            done = result.step == cfg.steps or result.out_of_time

            record: dict[str, Any] = {}
            if self.val_loss is not None and (done or (cfg.eval_every and result.step % cfg.eval_every == 0)):
                with average.applied() if average is not None else contextlib.nullcontext():
                    val = self._evaluate()
                    if best_val is None or val < best_val:
                        best_val, bad_evals = val, 0
                    else:
                        bad_evals += 1
                    best.offer(val, result.step, self.objective)
                result.val_losses.append((result.step, val))
                record["val_loss"] = val
                rankings = getattr(self.val_loss, "rankings", None)  # ranking validation: each task's rho
                if rankings:
                    result.val_rankings.append((result.step, dict(rankings)))
                    record["val_rankings"] = dict(rankings)
                result.best_val_loss = best_val
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
                for callback in callbacks:
                    callback.on_log(record)
            if checkpoints is not None and (
                done or result.stopped_early or (cfg.checkpoint_every and result.step % cfg.checkpoint_every == 0)
            ):
                if dist.is_main:
                    extra = {"best_val_loss": best_val, "bad_evals": bad_evals, "seconds": clock.elapsed()}
                    averaged = average.values if average is not None else None
                    checkpoints.save(self.objective, optimizer, scheduler, result.step, extra, averaged)
                barrier(dist)
            for callback in callbacks:
                callback.on_step_end(result.step)
            if result.stopped_early or result.out_of_time:
                break
        for callback in callbacks:
            callback.on_end()
        if average is not None:  # the average is the model; the best one, with validation
            copy_into(params, average.values)
        if self.val_loss is not None and best.kept:
            self.objective.load_state_dict(best.average())
        result.kept_steps = best.steps
        self.objective.eval()
        result.seconds = clock.elapsed()  # a resumed run's earlier calls included
        return result

    def _out_of_time(self, clock: Clock, dist: DistInfo) -> bool:
        """Whether ``max_seconds`` of training have passed (on any rank: every rank stops at the same step)."""
        if not self.config.max_seconds:
            return False
        late = float(clock.elapsed() >= self.config.max_seconds)
        return (mean_across_ranks(late, dist, self.device) if dist.enabled else late) > 0

    def _resume(self, checkpoints, optimizer, scheduler, average, best) -> tuple[int, float | None, int, float]:
        """Restore the latest checkpoint: weights, optimizer, schedule, RNG, moving average, kept weights."""
        if checkpoints is None:
            raise ValueError("resume needs a run folder")
        state = checkpoints.load_latest(self.objective, optimizer, scheduler)
        if (state["averaged"] is None) != (average is None):
            raise ValueError(
                f"cannot resume {checkpoints.folder}: ema_decay was {'on' if average is None else 'off'} "
                "when the checkpoint was written; resume with the same setting"
            )
        if average is not None:
            average.load(state["averaged"])
        best_val = state["extra"].get("best_val_loss")
        best.load(best_val, self.device, until=state["step"])
        extra = state["extra"]
        return state["step"], best_val, extra.get("bad_evals", 0), extra.get("seconds", 0.0)

    def _callbacks(self, dist: DistInfo) -> list[Callback]:
        """Only the main process reports: the metrics file, the progress bar, then the caller's callbacks."""
        if not dist.is_main:
            return []
        own: list[Callback] = [MetricsLog(self.run_dir)] if self.run_dir is not None else []
        if self.config.progress:
            own.append(ProgressBar())
        return own + self.callbacks

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

    def _evaluate(self) -> float:
        assert self.val_loss is not None
        self.objective.eval()
        with torch.no_grad(), self._autocast():
            value = float(self.val_loss(self.objective))
        self.objective.train()
        return value
