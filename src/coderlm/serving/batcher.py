"""One model's bounded queue, and the worker that samples it in micro-batches.

Requests put their inputs in the queue (``submit``) and wait. The worker takes the first waiting
request, lets others join it until the batch holds ``max_batch`` inputs or the first has waited
``max_wait_s``, and makes one sampling call for all of them in its own thread (the event loop
goes on taking requests meanwhile); each request then gets its own rows. Within a call every
distinct text is decoded once, and requests that sent the same text share its samples. Requests
asking for different ``num_samples`` share a batch but not a call: one call per ``num_samples`` (0: the
exact median, walked without samples, as one sample per input).

A request is never split across batches, so one larger than ``max_batch`` makes a batch of its own.
A request carrying a ``seed`` is sampled alone, its texts as given (no de-duplication): its result
is exactly the in-process ``sample(texts, num_samples, seed=seed)``, whatever else is queued.

The queue holds at most ``queue_size`` inputs: a request that would overflow it is refused at once
(``QueueFullError``, with a ``retry_after`` estimated from the recent throughput), so nobody waits
without bound. A failing sampling call fails the requests of that call (``BatchFailedError``) and the
worker goes on. ``stop`` lets the worker finish what is queued, then ends it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from coderlm.serving.metrics import ModelMetrics

log = logging.getLogger("coderlm")

# (texts, num_samples, seed) -> float64 samples (len(texts), num_samples, k); run in the worker's thread
SampleFn = Callable[[list[str], int, "int | None"], np.ndarray]


class QueueFullError(Exception):
    """The queue has no room for the request; ``retry_after``: seconds after which it likely has."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BatchFailedError(Exception):
    """The sampling call holding the request raised; the message is the model's error."""


@dataclasses.dataclass(eq=False)
class Job:
    texts: list[str]
    num_samples: int
    seed: int | None
    future: asyncio.Future
    arrived: float  # event-loop time


class Batcher:
    """The queue and worker of one model. ``start`` and ``submit`` run in the event loop."""

    def __init__(
        self,
        sample: SampleFn,
        *,
        name: str = "model",
        max_batch: int = 64,
        max_wait_s: float = 0.005,
        queue_size: int = 1024,
        metrics: ModelMetrics | None = None,
    ) -> None:
        self.sample, self.name, self.metrics = sample, name, metrics
        self.max_batch, self.max_wait_s, self.queue_size = max_batch, max_wait_s, queue_size
        self._pending: deque[Job] = deque()
        self._queued = 0  # inputs in _pending
        self._running = 0  # inputs in the sampling call under way
        self._arrived = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task | None = None
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"coderlm-{name}")
        self._rate = 0.0  # inputs per second of recent sampling calls, for Retry-After

    @property
    def queued(self) -> int:
        """Inputs waiting (not counting the call under way)."""
        return self._queued

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._work(), name=f"batcher-{self.name}")

    async def stop(self) -> None:
        """Finish what is queued, then end the worker and its thread."""
        self._closing = True
        self._arrived.set()
        if self._task is not None:
            await self._task
        self._executor.shutdown(wait=True)

    async def submit(self, texts: list[str], num_samples: int, seed: int | None = None) -> np.ndarray:
        """Samples (len(texts), num_samples, k) for ``texts``, once their batch has run.

        Raises ``QueueFullError`` at once when the queue has no room, ``BatchFailedError`` when the call failed."""
        if self._closing:
            raise QueueFullError("the server is shutting down", 1)
        if self._queued + len(texts) > self.queue_size:
            raise QueueFullError(
                f"model {self.name!r} has {self._queued} inputs queued; {len(texts)} more would overflow "
                f"the queue of {self.queue_size} (--queue-size)",
                self.retry_after(),
            )
        loop = asyncio.get_running_loop()
        job = Job(texts, num_samples, seed, loop.create_future(), loop.time())
        self._pending.append(job)
        self._set_queued(self._queued + len(texts))
        self._arrived.set()
        return await job.future

    def retry_after(self) -> int:
        """Whole seconds until the inputs ahead are likely done (at least 1)."""
        if self._rate <= 0:
            return 1
        return max(1, math.ceil((self._queued + self._running) / self._rate))

    # -------------------------------------------------------------- worker
    async def _work(self) -> None:
        while True:
            while not self._pending:
                if self._closing:
                    return
                self._arrived.clear()
                await self._arrived.wait()
            await self._gather()
            jobs = self._take()
            if jobs:
                await self._run(jobs)

    async def _gather(self) -> None:
        """Wait until ``max_batch`` inputs are queued or the first has waited ``max_wait_s``."""
        first = self._pending[0]
        if first.seed is not None:
            return  # sampled alone: nothing can join it
        loop = asyncio.get_running_loop()
        deadline = first.arrived + self.max_wait_s
        while self._queued < self.max_batch and not self._closing:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except asyncio.TimeoutError:
                return

    def _take(self) -> list[Job]:
        """The jobs of the next batch, in arrival order: up to ``max_batch`` inputs (at least one job);
        a seeded job alone. Jobs whose requests were abandoned are dropped."""
        jobs: list[Job] = []
        count = 0
        while self._pending:
            job = self._pending[0]
            if not job.future.done():  # else its request was abandoned: drop it
                if jobs and (job.seed is not None or count + len(job.texts) > self.max_batch):
                    break
                jobs.append(job)
                count += len(job.texts)
            self._pending.popleft()
            self._queued -= len(job.texts)
            if jobs and jobs[0].seed is not None:
                break
        self._set_queued(self._queued)
        return jobs

    async def _run(self, jobs: list[Job]) -> None:
        """One sampling call per ``num_samples`` among ``jobs``; each job gets its rows or the call's error."""
        groups: dict[int, list[Job]] = {}
        for job in jobs:
            groups.setdefault(job.num_samples, []).append(job)
        loop = asyncio.get_running_loop()
        for num_samples, group in groups.items():
            seed = group[0].seed  # a seeded job is alone in its batch
            count = sum(len(job.texts) for job in group)
            texts = group[0].texts if seed is not None else list(dict.fromkeys(t for job in group for t in job.texts))
            self._running = count
            start = loop.time()
            try:
                samples = await loop.run_in_executor(self._executor, self.sample, texts, num_samples, seed)
                self._answer(group, texts, samples)
            except Exception as exc:  # a model error fails this call's requests only; the worker goes on
                log.exception("model %r: sampling %d input(s) failed", self.name, len(texts))
                self._fail(group, BatchFailedError(f"model {self.name!r} failed: {type(exc).__name__}: {exc}"))
                continue
            finally:
                self._running = 0
            seconds = loop.time() - start
            rate = count / max(seconds, 1e-6)
            self._rate = rate if self._rate == 0 else 0.8 * self._rate + 0.2 * rate
            if self.metrics is not None:
                self.metrics.batch(count, len(texts), seconds)

    def _answer(self, group: list[Job], texts: list[str], samples: np.ndarray) -> None:
        if group[0].seed is not None:
            rows = [samples]
        else:
            index = {text: i for i, text in enumerate(texts)}
            rows = [samples[[index[t] for t in job.texts]] for job in group]
        for job, result in zip(group, rows, strict=True):
            if not job.future.done():  # its request may have been abandoned meanwhile
                job.future.set_result(result)

    def _fail(self, group: list[Job], error: BatchFailedError) -> None:
        if self.metrics is not None:
            self.metrics.failure()
        for job in group:
            if not job.future.done():
                job.future.set_exception(error)

    def _set_queued(self, inputs: int) -> None:
        self._queued = inputs
        if self.metrics is not None:
            self.metrics.queued(inputs)
