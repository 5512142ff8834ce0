"""The micro-batcher alone, with a stand-in model: who shares a call, who gets which rows, and refusals."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from coderlm.serving.batcher import Batcher, BatchFailedError, QueueFullError


class FakeModel:
    """Records each call; every sample of a text is its length, so rows show whose they are.
    ``hold`` keeps the next call running until released."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], int, int | None]] = []
        self.hold = threading.Event()
        self.hold.set()
        self.started = threading.Event()

    def __call__(self, texts: list[str], num_samples: int, seed: int | None) -> np.ndarray:
        self.calls.append((list(texts), num_samples, seed))
        self.started.set()
        self.hold.wait(10)
        if any("FAIL" in text for text in texts):
            raise RuntimeError("bad input")
        return np.array([[[len(t)]] * num_samples for t in texts], dtype=np.float64)


def rows(texts: list[str], num_samples: int) -> np.ndarray:
    return np.array([[[len(t)]] * num_samples for t in texts], dtype=np.float64)


async def started(model: FakeModel) -> None:
    """Until the worker is inside a call (with ``hold`` clear, it stays there)."""
    while not model.started.is_set():
        await asyncio.sleep(0.001)


def run(coroutine_function, model: FakeModel, **options):
    async def main():
        batcher = Batcher(model, **options)
        batcher.start()
        try:
            return await coroutine_function(batcher)
        finally:
            model.hold.set()
            await batcher.stop()

    return asyncio.run(main())


def test_requests_waiting_together_share_one_call_and_get_their_own_rows():
    model = FakeModel()

    async def scenario(batcher):
        requests = [["a", "bb"], ["ccc"], ["bb", "dddd"]]
        return await asyncio.gather(*(batcher.submit(texts, 3) for texts in requests))

    answers = run(scenario, model, max_wait_s=0.05)
    assert model.calls == [(["a", "bb", "ccc", "dddd"], 3, None)]  # "bb" decoded once
    for texts, answer in zip([["a", "bb"], ["ccc"], ["bb", "dddd"]], answers, strict=True):
        np.testing.assert_array_equal(answer, rows(texts, 3))


def test_batches_hold_at_most_max_batch_inputs_and_never_split_a_request():
    model = FakeModel()
    model.hold.clear()

    async def scenario(batcher):
        first = asyncio.ensure_future(batcher.submit(["0"], 2))
        await started(model)  # the worker is busy: the rest queue up behind it
        rest = [asyncio.ensure_future(batcher.submit(texts, 2)) for texts in (["1", "2"], ["3"], ["4", "5", "6"])]
        await asyncio.sleep(0.01)
        model.hold.set()
        return await asyncio.gather(first, *rest)

    run(scenario, model, max_batch=2, max_wait_s=0)
    assert [texts for texts, _, _ in model.calls] == [["0"], ["1", "2"], ["3"], ["4", "5", "6"]]


def test_a_seeded_request_is_sampled_alone_and_as_given():
    model = FakeModel()
    model.hold.clear()

    async def scenario(batcher):
        first = asyncio.ensure_future(batcher.submit(["0"], 2))
        await started(model)
        queued = [
            asyncio.ensure_future(batcher.submit(["a"], 2)),
            asyncio.ensure_future(batcher.submit(["b", "b"], 2, seed=7)),
            asyncio.ensure_future(batcher.submit(["c"], 2)),
        ]
        await asyncio.sleep(0.01)
        model.hold.set()
        return await asyncio.gather(first, *queued)

    answers = run(scenario, model, max_wait_s=0)
    assert model.calls == [(["0"], 2, None), (["a"], 2, None), (["b", "b"], 2, 7), (["c"], 2, None)]
    np.testing.assert_array_equal(answers[2], rows(["b", "b"], 2))


def test_different_sample_counts_share_a_batch_but_not_a_call():
    model = FakeModel()

    async def scenario(batcher):
        return await asyncio.gather(batcher.submit(["a"], 2), batcher.submit(["a"], 5), batcher.submit(["b"], 2))

    answers = run(scenario, model, max_wait_s=0.05)
    assert model.calls == [(["a", "b"], 2, None), (["a"], 5, None)]
    assert [a.shape for a in answers] == [(1, 2, 1), (1, 5, 1), (1, 2, 1)]


def test_a_full_queue_refuses_at_once():
    model = FakeModel()
    model.hold.clear()

    async def scenario(batcher):
        first = asyncio.ensure_future(batcher.submit(["0"], 2))
        await started(model)
        waiting = asyncio.ensure_future(batcher.submit(["1", "2", "3"], 2))
        await asyncio.sleep(0)
        with pytest.raises(QueueFullError, match="3 inputs queued; 2 more would overflow the queue of 4") as refused:
            await batcher.submit(["4", "5"], 2)
        assert refused.value.retry_after >= 1 and batcher.queued == 3
        model.hold.set()
        await asyncio.gather(first, waiting)
        return await batcher.submit(["4", "5"], 2)  # room again

    assert run(scenario, model, queue_size=4, max_wait_s=0).shape == (2, 2, 1)


def test_a_failing_call_fails_its_requests_only():
    model = FakeModel()
    model.hold.clear()

    async def scenario(batcher):
        first = asyncio.ensure_future(batcher.submit(["FAIL"], 2))
        await started(model)
        after = asyncio.ensure_future(batcher.submit(["fine"], 2))
        model.hold.set()
        with pytest.raises(BatchFailedError, match="model 'm' failed: RuntimeError: bad input"):
            await first
        return await after

    np.testing.assert_array_equal(run(scenario, model, name="m", max_wait_s=0), rows(["fine"], 2))


def test_abandoned_requests_are_not_sampled_and_stop_finishes_the_queue():
    model = FakeModel()
    model.hold.clear()

    async def scenario(batcher):
        first = asyncio.ensure_future(batcher.submit(["0"], 2))
        await started(model)
        abandoned = asyncio.ensure_future(batcher.submit(["gone"], 2))
        kept = asyncio.ensure_future(batcher.submit(["kept"], 2))
        await asyncio.sleep(0)
        abandoned.cancel()
        model.hold.set()
        await batcher.stop()  # returns once the queue is empty
        assert kept.done() and first.done()
        with pytest.raises(QueueFullError, match="shutting down"):
            await batcher.submit(["late"], 2)

    run(scenario, model, max_wait_s=0)
    assert [texts for texts, _, _ in model.calls] == [["0"], ["kept"]]
