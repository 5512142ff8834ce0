"""How many times a kernel or graph is called to time it: warm-ups stop once warm, graphs keep a budget."""

import time

from coderlm.collect.kernels.inductor import MIN_REPEATS, WARMUP_S, _median_us


def _counted(seconds: float):
    calls = []

    def call():
        calls.append(time.perf_counter())
        time.sleep(seconds)

    return call, calls


def test_fast_calls_get_every_warmup_and_repeat():
    call, calls = _counted(0.0)
    assert _median_us(call, repeats=30, warmups=10, device="cpu") < 1e4
    assert len(calls) == 40


def test_slow_calls_stop_warming_up_and_graphs_keep_their_budget():
    call, calls = _counted(1.05 * WARMUP_S)
    median = _median_us(call, repeats=6, warmups=10, device="cpu")
    assert len(calls) == 1 + 6 and median >= 1e6 * WARMUP_S  # one warm-up was enough; every repeat kept
    call, calls = _counted(1.05 * WARMUP_S)
    _median_us(call, repeats=30, warmups=10, device="cpu", budget_s=0.5)
    assert len(calls) == 1 + MIN_REPEATS  # 30 repeats would take 6 s: the budget allows the minimum


def test_calls_are_restored_before_each_call_untimed():
    state, seen = [0], []

    def before():
        state[0] = 0

    def call():
        state[0] += 1
        seen.append(state[0])

    _median_us(call, repeats=5, warmups=2, device="cpu", before=before)
    assert seen == [1] * 7
