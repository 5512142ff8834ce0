"""Which rows go into each step's batch: a pure function of (seed, step).

Because a batch depends only on the seed and the step number, resuming from a
checkpoint needs no saved data position: step s draws the same rows whether the
run was interrupted or not.

* ``proportional``: epochs over all rows, each a fresh seeded permutation; every
  row is seen equally often, so tasks are mixed in proportion to their size.
* ``temperature``: each row's task is drawn with probability proportional to
  ``rows_in_task ** (1 / T)`` (T = 1 is proportional, large T is uniform over
  tasks), then a row uniformly within the task.
* ``weights``: the same, each task drawn with the probability its given weight (training option
  ``task_weights``, normalized) says: a task that overfits early can get fewer steps, one that needs
  more gets more, whatever their sizes.

With ``lengths`` (proportional mode), batches hold rows of similar length, so a batch
trimmed to its longest row carries little padding: each epoch's permutation is cut
into windows of ``BUCKET_WINDOW`` batches, each window sorted by length and cut into
batches, and the batches shuffled. Every row is still seen once per epoch, and a batch
is still a pure function of (seed, step).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from coderlm.options import OptionError
from coderlm.training.config import TrainConfig, parse_task_weights

BUCKET_WINDOW = 32  # batches per length-sorted window: larger = less padding, less randomness


class BatchSampler:
    def __init__(
        self,
        n: int,
        batch_size: int,
        seed: int = 0,
        tasks: Sequence[str] | None = None,
        mode: str = "proportional",
        temperature: float = 2.0,
        lengths: Sequence[int] | None = None,
        weights: dict[str, float] | None = None,
    ) -> None:
        if n < 1:
            raise ValueError("cannot sample batches from an empty training set")
        self.n, self.batch_size, self.seed, self.mode = n, batch_size, seed, mode
        self.lengths = None if lengths is None else np.asarray(lengths)
        if self.lengths is not None and self.lengths.shape != (n,):
            raise ValueError(f"got {self.lengths.shape} lengths for {n} rows")
        self._permutations: dict[int, np.ndarray] = {}
        if mode in ("temperature", "weights"):
            names = np.asarray(list(tasks) if tasks is not None else [""] * n)
            if len(names) != n:
                raise ValueError(f"got {len(names)} task labels for {n} rows")
            labels = sorted(set(names.tolist()))
            self.task_rows = [np.flatnonzero(names == t) for t in labels]
            if mode == "weights":
                shares = np.array(task_shares(labels, weights or {}, tasks is not None))
            else:
                shares = np.array([len(r) for r in self.task_rows], dtype=np.float64) ** (1.0 / temperature)
            self.task_probs = shares / shares.sum()
        elif mode != "proportional":
            raise ValueError(f"unknown task sampling mode {mode!r}")

    @classmethod
    def for_config(
        cls, n: int, config: TrainConfig, tasks: Sequence[str] | None = None, lengths: Sequence[int] | None = None
    ) -> BatchSampler:
        """The sampler a training config asks for (``lengths`` are used with ``bucket_by_length``)."""
        lengths = lengths if config.bucket_by_length else None
        weights = parse_task_weights(config.task_weights)
        return cls(
            n, config.batch_size, config.seed, tasks, config.task_sampling, config.task_temperature, lengths, weights
        )

    def batch(self, step: int) -> np.ndarray:
        """Row indices of the batch for optimizer step ``step`` (0-based)."""
        if self.mode != "proportional":  # a task drawn per row, then a row within it
            rng = np.random.default_rng([self.seed, step])
            tasks = rng.choice(len(self.task_rows), size=self.batch_size, p=self.task_probs)
            return np.array([self.task_rows[t][rng.integers(len(self.task_rows[t]))] for t in tasks])
        positions = step * self.batch_size + np.arange(self.batch_size)
        epochs, offsets = np.divmod(positions, self.n)
        return np.array([self._permutation(e)[o] for e, o in zip(epochs.tolist(), offsets.tolist(), strict=True)])

    def _permutation(self, epoch: int) -> np.ndarray:
        if epoch not in self._permutations:
            if len(self._permutations) > 4:
                self._permutations.clear()
            rng = np.random.default_rng([self.seed, epoch])
            order = rng.permutation(self.n)
            self._permutations[epoch] = order if self.lengths is None else self._bucketed(order, epoch, rng)
        return self._permutations[epoch]

    def _bucketed(self, order: np.ndarray, epoch: int, rng: np.random.Generator) -> np.ndarray:
        """``order`` rearranged so that the batches the step arithmetic cuts from it hold similar lengths."""
        bs = self.batch_size
        head = (bs - (epoch * self.n) % bs) % bs  # completes the batch the previous epoch's last rows started
        rest = order[head:]
        window = bs * BUCKET_WINDOW
        batches = []
        for start in range(0, len(rest), window):
            rows = rest[start : start + window]
            rows = rows[np.argsort(self.lengths[rows], kind="stable")]
            batches += [rows[i : i + bs] for i in range(0, len(rows), bs)]
        tail = batches.pop() if batches and len(batches[-1]) < bs else order[:0]  # starts the next epoch's batch
        shuffled = [batches[i] for i in rng.permutation(len(batches))]
        return np.concatenate([order[:head], *shuffled, tail])


def task_shares(labels: list[str], weights: dict[str, float], labelled: bool) -> list[float]:
    """The weight of each training task (``labels``, sorted) from training option ``task_weights``: every
    task must be named, and only those."""
    if not labelled:
        raise OptionError("task_weights", "weigh tasks, but the training rows have no task labels", "training option")
    missing, unknown = sorted(set(labels) - set(weights)), sorted(set(weights) - set(labels))
    if missing or unknown:
        problems = [f"no weight for task(s) {missing}"] * bool(missing)
        problems += [f"task(s) {unknown} not among the training rows' {labels}"] * bool(unknown)
        raise OptionError("task_weights", "; ".join(problems), "training option")
    return [weights[t] for t in labels]  # parse_task_weights has checked that one is above 0
