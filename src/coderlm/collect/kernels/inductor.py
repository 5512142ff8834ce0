"""Compile one PyTorch program with TorchInductor, keep the source of every kernel it generates, time each.

Run as ``python -m coderlm.collect.kernels.inductor``: a worker process that reads jobs (one JSON
object per line) on stdin and answers each with one JSON line on stdout, forgetting the compiled
program in between (``torch._dynamo.reset()``). ``worker.KernelWorker`` drives it from the collector
with a timeout per program: a program that hangs or crashes costs a restart of this process, never
the collection. (Starting Python and torch costs ~4 s, as much as compiling a small program, so a
worker serves many programs.)

On CPU, Inductor writes fused C++/OpenMP kernels (``cpp_fused_*``); matmuls and convolutions run as
library calls (``extern_kernels.mm``, ``aten.convolution``), which are not generated source: they are
skipped as kernels, listed in the program's record, and counted in the whole-graph latency. On CUDA
the kernels are Triton (``triton_*``), timed with ``triton.testing.do_bench``.

Timing (CPU): one thread (``OMP_NUM_THREADS=1``, set by the collector), denormals flushed, the
process pinned to one core. The compiled program runs once with each kernel wrapped to capture its
arguments; then each kernel is called alone ``warmups + repeats`` times and its latency is the
median of the repeats (buffers a kernel updates in place are restored before each call, untimed;
warm-ups stop early once they took 0.2 s, at least one).
A ``rerun`` job times everything a second time: the two-run noise ceiling. The whole graph is timed
the same way (median of ``repeats`` calls of the compiled module; fewer, not under 5, when they would
take over 1 s: a graph of library calls can take seconds per call, a kernel row keeps every repeat).
With ``lock``, the timing phase holds that file lock: parallel workers compile at once but time one
at a time; the worker says
``{"event": "waiting"}`` before it waits for the lock and ``{"event": "timing"}`` once it holds it,
so the collector's timeout covers compiling and timing but not the wait.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import statistics
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import torch
import torch._inductor.config as inductor_config
from torch._inductor.codecache import PyCodeCache
from torch._inductor.utils import run_and_get_code

from coderlm.collect.kernels.texts import CPP_KERNEL, TRITON_KERNEL, graph_text, kernel_text

WARMUP_S = 0.2  # warm-up calls stop once they took this long
GRAPH_BUDGET_S = 1.0  # a whole graph is timed with fewer repeats when they would take longer than this
MIN_REPEATS = 5  # but never fewer than this
EXTERN_CALL = re.compile(r"\b(extern_kernels\.\w+|aten\.\w+(?:\.\w+)?)\(")
KINDS = (  # the first whose words appear in a kernel's name (the ops it fuses) names its kind
    ("softmax", ("softmax", "logsumexp")),
    ("norm", ("norm", "var_mean")),
    ("reduction", ("sum", "mean", "amax", "amin", "max", "min", "prod", "argmax", "argmin", "cumsum", "any", "all")),
    ("convolution", ("convolution", "conv")),
    ("matmul", ("mm", "bmm", "addmm", "matmul")),
)


def kernel_kind(name: str) -> str:
    """pointwise, reduction, softmax, norm, convolution or matmul (epilogues), from the ops the name lists."""
    words = set(name.split("_"))
    return next((kind for kind, markers in KINDS if words & set(markers)), "pointwise")


def generated_kernels(code: str, device: str) -> dict[str, str]:
    """Kernel name -> source, in the order the generated module defines them."""
    pattern = TRITON_KERNEL if device == "cuda" else CPP_KERNEL
    return {match.group(1): match.group(2) for match in pattern.finditer(code)}


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Build, compile, capture and time one program; a record with ``status`` ok or the failing stage."""
    stage, seconds, clock = "build", {}, time.perf_counter()
    try:
        device = job.get("device", "cpu")
        dtype = getattr(torch, job.get("dtype", "float32"))
        namespace: dict[str, Any] = {"__name__": "coderlm_kernel_program"}
        exec(compile(job["source"], job.get("program", "<program>"), "exec"), namespace)
        torch.manual_seed(0)
        model = namespace["Model"](*namespace["get_init_inputs"]()).eval().to(device=device, dtype=dtype)
        inputs = [_cast(x, device, dtype) for x in namespace["get_inputs"]()]
        seconds["build"], clock = time.perf_counter() - clock, time.perf_counter()
        stage = "compile"
        compiled = torch.compile(model, backend="inductor")
        with torch.no_grad():
            _, codes = run_and_get_code(compiled, *inputs)
        seconds["compile"], clock = time.perf_counter() - clock, time.perf_counter()
        stage = "capture"
        code = "\n".join(codes)
        sources = {}
        for text in codes:
            sources |= generated_kernels(text, device)
        module = _generated_module(sources)
        captured = _capture(module, sources, device)
        with torch.no_grad():
            compiled(*inputs)
        seconds["capture"], clock = time.perf_counter() - clock, time.perf_counter()
        stage = "time"
        timings, rerun = {"kernels": {}, "graph": None}, None
        if job.get("time", True):
            _event("waiting")  # the collector stops the clock while this worker waits for the timing lock
            with _locked(job.get("lock")):
                _event("timing")
                seconds["wait"], clock = time.perf_counter() - clock, time.perf_counter()
                timings = _time_all(captured, compiled, inputs, job, device)
                rerun = _time_all(captured, compiled, inputs, job, device) if job.get("rerun") else None
                seconds["time"] = time.perf_counter() - clock
    except Exception as exc:  # one program's failure is its record, not the collector's
        return {
            "status": "error",
            "stage": stage,
            "error": f"{type(exc).__name__}: {exc}"[:2000],
            "traceback": traceback.format_exc()[-2000:],
        }
    kernels = []
    for name, source in sources.items():
        record = {"name": name, "kind": kernel_kind(name), "text": kernel_text(name, source)}
        record["latency_us"] = timings["kernels"].get(name)
        if rerun is not None:
            record["rerun_latency_us"] = rerun["kernels"].get(name)
        kernels.append(record)
    graph = {
        "text": graph_text(code, device),
        "latency_us": timings["graph"],
        "extern_calls": sorted(set(EXTERN_CALL.findall(code))),
    }
    if rerun is not None:
        graph["rerun_latency_us"] = rerun["graph"]
    return {
        "status": "ok",
        "compile_s": round(seconds["compile"], 3),
        "seconds": {stage: round(value, 3) for stage, value in seconds.items()},
        "kernels": kernels,
        "graph": graph,
        "input_shapes": [list(x.shape) for x in inputs if isinstance(x, torch.Tensor)],
    }


def _cast(value: Any, device: str, dtype: torch.dtype) -> Any:
    if not isinstance(value, torch.Tensor):
        return value
    value = value.to(device)
    return value.to(dtype) if value.is_floating_point() else value


def _generated_module(sources: dict[str, str]):
    """The loaded module whose globals hold the kernels (the generated ``call`` looks them up there)."""
    for module in reversed(PyCodeCache.modules):
        if all(hasattr(module, name) for name in sources):
            return module
    raise RuntimeError("the generated module with these kernels is not loaded")


def _capture(module, sources: dict[str, str], device: str) -> dict[str, dict]:
    """Wrap each kernel so the next run of the graph records its arguments."""
    captured: dict[str, dict] = {}
    for name, source in sources.items():
        kernel = getattr(module, name)
        entry: dict[str, Any] = {"kernel": kernel, "args": None, "in_place": _in_place_args(source, device)}
        captured[name] = entry
        if device == "cuda":
            run = kernel.run

            def record(*args, _entry=entry, _run=run, **kwargs):
                _entry["args"], _entry["kwargs"] = args, kwargs
                return _run(*args, **kwargs)

            kernel.run = record
        else:

            def record(*args, _entry=entry, _kernel=kernel):
                _entry["args"] = args
                return _kernel(*args)

            setattr(module, name, record)
    return captured


def _in_place_args(source: str, device: str) -> list[int]:
    """Positions of the arguments a CPU kernel updates in place (``in_out_ptr``): restored before each call."""
    if device == "cuda":
        return []
    signature = re.search(r"kernel\((.*?)\)", source, re.S)
    names = [part.strip().split()[-1].lstrip("*") for part in signature.group(1).split(",")] if signature else []
    return [i for i, name in enumerate(names) if name.startswith("in_out_ptr")]


def _time_all(captured: dict[str, dict], compiled, inputs: list, job: dict, device: str) -> dict:
    repeats, warmups = int(job.get("repeats", 30)), int(job.get("warmups", 5))
    kernels = {}
    for name, entry in captured.items():
        if entry["args"] is None:
            continue  # generated but not called on these inputs
        kernels[name] = _time_kernel(entry, repeats, warmups, device)
    with torch.no_grad():
        graph = _median_us(lambda: compiled(*inputs), repeats, warmups, device, budget_s=GRAPH_BUDGET_S)
    return {"kernels": kernels, "graph": graph}


def _time_kernel(entry: dict, repeats: int, warmups: int, device: str) -> float:
    args = entry["args"]
    if device == "cuda":
        from triton.testing import do_bench  # the CUDA path needs triton

        kernel, kwargs = entry["kernel"], entry["kwargs"]
        return 1000.0 * float(do_bench(lambda: kernel.run(*args, **kwargs), warmup=25, rep=100))
    kernel, in_place = entry["kernel"], entry["in_place"]
    saved = {i: args[i].clone() for i in in_place}

    def restore() -> None:
        for position, value in saved.items():
            args[position].copy_(value)

    return _median_us(lambda: kernel(*args), repeats, warmups, device, before=restore)


def _median_us(
    call: Callable[[], Any],
    repeats: int,
    warmups: int,
    device: str,
    before: Callable[[], Any] | None = None,
    budget_s: float | None = None,
) -> float:
    """Median µs of ``repeats`` calls after up to ``warmups`` (at least one; no more once they took
    ``WARMUP_S``: a 100 ms kernel is warm after one call). ``before`` runs untimed before each call. With
    ``budget_s``, fewer repeats (not under ``MIN_REPEATS``) when the last warm-up says they would take longer."""
    times: list[float] = []
    warmed, warm_s = 0, 0.0
    while len(times) < repeats:
        if before is not None:
            before()
        if device == "cuda":
            torch.cuda.synchronize()
        began = time.perf_counter_ns()
        call()
        if device == "cuda":
            torch.cuda.synchronize()
        took_us = (time.perf_counter_ns() - began) / 1000.0
        if warmed < max(1, warmups) and (warmed == 0 or warm_s < WARMUP_S):
            warmed, warm_s = warmed + 1, warm_s + took_us / 1e6
            if budget_s is not None:
                repeats = min(repeats, max(MIN_REPEATS, int(budget_s / (took_us / 1e6))))
        else:
            times.append(took_us)
    return float(statistics.median(times))


@contextlib.contextmanager
def _locked(path: str | None):
    if not path:
        yield
        return
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _event(name: str) -> None:
    """Tell the collector which phase this job is in (a line it reads before the result)."""
    sys.stdout.write(json.dumps({"event": name}) + "\n")
    sys.stdout.flush()


def _exit_with(parent: int) -> None:
    """End this process soon after ``parent`` ends (a killed collector closes stdin, but a worker busy
    compiling or timing would only read that after its job: minutes of a core). ``parent`` comes from
    the collector (``CODERLM_COLLECTOR_PID``): it may have ended before this process got here."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def main() -> None:
    """Serve jobs from stdin until it closes: one JSON line in, one JSON line out."""
    parent = int(os.environ.get("CODERLM_COLLECTOR_PID", os.getppid()))
    threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    inductor_config.compile_threads = 1  # the collector runs programs in parallel; no compile pool here
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        if job.get("core") is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {int(job["core"])})
        result = run_job(job)
        torch._dynamo.reset()
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
