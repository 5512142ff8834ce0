"""What the training loop tells the outside world: each hook of a ``Callback`` is called on the
main process only. ``MetricsLog`` writes ``metrics.jsonl`` in the run folder; ``ProgressBar``
shows loss, examples/s and ETA on stderr."""

from __future__ import annotations

import json
from pathlib import Path

from tqdm.auto import tqdm

from coderlm.atomic import write_atomic

METRICS_FILE = "metrics.jsonl"


class Callback:
    """Hooks of the training loop; override the ones you need."""

    def on_start(self, step: int, steps: int) -> None:
        """Training starts (or resumes) after ``step`` of ``steps`` optimizer steps."""

    def on_log(self, record: dict) -> None:
        """A metrics record: step, loss (mean since the last record), lr, examples_per_s, and val_loss
        when validation ran at this step (with ranking validation also val_rankings: each task's rho per
        objective, ``"task/objective"``)."""

    def on_step_end(self, step: int) -> None:
        """Optimizer step ``step`` (1-based) is done: logged, validated and checkpointed."""

    def on_end(self) -> None:
        """The loop is over (finished or stopped early)."""


class MetricsLog(Callback):
    """Appends each record to ``run_dir/metrics.jsonl`` as one JSON line. On (re)start, lines of
    steps after the starting step are dropped first: those steps run again."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / METRICS_FILE

    def on_start(self, step: int, steps: int) -> None:
        if self.path.is_file():
            kept = [line for line in self.path.read_text().splitlines() if line and json.loads(line)["step"] <= step]
            write_atomic(self.path, "".join(line + "\n" for line in kept))

    def on_log(self, record: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")


class ProgressBar(Callback):
    def on_start(self, step: int, steps: int) -> None:
        self.bar = tqdm(total=steps, initial=step, desc="train", unit="step", dynamic_ncols=True)

    def on_log(self, record: dict) -> None:
        self.bar.set_postfix(loss=f"{record['loss']:.4f}", ex_s=f"{record['examples_per_s']:.0f}")

    def on_step_end(self, step: int) -> None:
        self.bar.update(1)

    def on_end(self) -> None:
        self.bar.close()
