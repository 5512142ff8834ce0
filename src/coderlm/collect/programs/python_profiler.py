"""Profile a Python program the way the paper labels APPS: heap peak and runtime of its tests.

A program is ``code`` (definitions: a solution) plus ``tests`` (statements that call it). Two
fresh ``python3 -I -S -B`` processes run it in a ``Sandbox``:

1. **memory** (untimed): compile both, execute the definitions, ``gc.collect()``, start
   ``tracemalloc``, take the baseline, run the tests, record *peak minus baseline*: the dynamic
   peak allocation of the tests (the paper's ``dyn_peak_alloc_bytes``). Compilation and the
   definitions are outside the trace, so the figure measures what the algorithm allocates,
   not the size of the source.
2. **timing**: the same set-up, then the tests run ``warmups + repeats`` times in the process
   (each in a fresh copy of the definitions' namespace, stdin rewound), each timed with
   ``time.perf_counter``; ``runtime_s`` is the median of the last ``repeats``. The process's
   peak RSS (rusage) and wall time are recorded beside it.

The memory run goes first with the plain timeout, so a program that hangs costs one timeout;
the timing run may take ``timeout_s`` per execution. A whole script (no separate tests) is
profiled as tests with empty definitions. ``python3`` is looked up on the sandbox's fixed
``PATH`` (the system interpreter; the collector's own virtual environment is neither needed
nor visible: ``-I -S`` ignores site-packages).
"""

from __future__ import annotations

import json
import statistics
from typing import Any

from coderlm.collect.programs.sandbox import Limits, Sandbox, isolation

RESULT = ".coderlm_result.json"

HARNESS = r"""
import gc, io, json, os, sys, time, tracemalloc
mode, warmups, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
module = sys.argv[4] if len(sys.argv) > 4 else "__main__"
result_path = os.path.abspath(RESULT_NAME)
def read(name):
    with open(name, encoding="utf-8") as f:
        return f.read()
stdin_data = read("stdin.txt") if os.path.exists("stdin.txt") else None
def rewind():
    if stdin_data is not None:
        sys.stdin = io.StringIO(stdin_data)
def run(code, scope):
    try:
        exec(code, scope)
    except SystemExit as stop:
        if stop.code not in (None, 0):
            raise
solution = compile(read("solution.py"), "solution.py", "exec")
tests = compile(read("tests.py"), "tests.py", "exec")
namespace = {"__name__": module, "__builtins__": __builtins__}
rewind()
run(solution, namespace)
if mode == "memory":
    scope = dict(namespace)
    rewind()
    gc.collect()
    tracemalloc.start()
    baseline = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    run(tests, scope)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    result = {"peak_bytes": peak - baseline, "baseline_bytes": baseline}
else:
    times = []
    for _ in range(warmups + repeats):
        scope = dict(namespace)
        rewind()
        start = time.perf_counter()
        run(tests, scope)
        times.append(time.perf_counter() - start)
    result = {"times": times[warmups:], "warmup_times": times[:warmups]}
with open(result_path, "w") as f:
    json.dump(result, f)
""".replace("RESULT_NAME", repr(RESULT))


def profile_python(
    code: str,
    tests: str = "",
    *,
    stdin: str | None = None,
    repeats: int = 11,
    warmups: int = 3,
    timeout_s: float = 10.0,
    memory_mb: int | None = 2048,
    interpreter: str = "python3",
    timing: bool = True,
    module: str = "__main__",
) -> dict[str, Any]:
    """Profile ``code`` + ``tests``; a JSON-ready record (``status`` ``passed`` or why not).

    Fields: ``status`` (passed, failed, timeout, crashed, output_limit), ``peak_memory_bytes``
    (dynamic peak of the tests), ``runtime_s`` (median of ``repeats``), ``runtime_repeats_s``,
    ``peak_rss_bytes`` and ``process_wall_s`` (timing process), ``exit_code``, ``stderr_tail``,
    ``repeats``, ``warmups``, ``timeout_s``, ``isolation``. ``timing=False`` skips the timing run.
    ``module``: the definitions' ``__name__`` (another name keeps a file's ``if __name__ == "__main__":``
    block from running).
    """
    if repeats < 1 or warmups < 0:
        raise ValueError(f"repeats must be >= 1 and warmups >= 0, got {repeats}, {warmups}")
    record: dict[str, Any] = {
        "language": "python",
        "repeats": repeats,
        "warmups": warmups,
        "timeout_s": timeout_s,
        "isolation": _isolation_summary(),
    }
    command = [interpreter, "-I", "-S", "-B", "harness.py"]
    with Sandbox() as box:
        box.write("harness.py", HARNESS)
        box.write("solution.py", code)
        box.write("tests.py", tests)
        if stdin is not None:
            box.write("stdin.txt", stdin)
        memory = box.run([*command, "memory", "0", "1", module], Limits(timeout_s=timeout_s, memory_mb=memory_mb))
        measured = _read_result(box, memory)
        if measured is None:
            return record | _failure(memory)
        record["peak_memory_bytes"] = int(measured["peak_bytes"])
        record["tracemalloc_baseline_bytes"] = int(measured["baseline_bytes"])
        record["memory_run_rss_bytes"] = memory.peak_rss_bytes
        if not timing:
            return record | {"status": "passed", "exit_code": 0, "stderr_tail": memory.stderr_tail()}
        (box.path / RESULT).unlink(missing_ok=True)
        limits = Limits(timeout_s=timeout_s * (warmups + repeats) + 5, memory_mb=memory_mb)
        timed = box.run([*command, "time", str(warmups), str(repeats), module], limits)
        measured = _read_result(box, timed)
        if measured is None:
            return record | _failure(timed)
    times = [float(t) for t in measured["times"]]
    return record | {
        "status": "passed",
        "runtime_s": statistics.median(times),
        "runtime_repeats_s": times,
        "peak_rss_bytes": timed.peak_rss_bytes,
        "process_wall_s": timed.wall_s,
        "exit_code": timed.returncode,
        "stderr_tail": timed.stderr_tail(),
    }


def profile_python_passes(code: str, tests: str = "", passes: int = 1, **options: Any) -> dict[str, Any]:
    """``profile_python``, then ``passes - 1`` more independent profiles of a passing program in ``reruns``."""
    record = profile_python(code, tests, **options)
    reruns = []
    for _ in range(passes - 1):
        if record["status"] != "passed":
            break
        again = profile_python(code, tests, **options)
        if again["status"] != "passed":
            return again | {"flaky": True}
        reruns.append({k: again[k] for k in ("runtime_s", "peak_memory_bytes")})
    return record | ({"reruns": reruns} if reruns else {})


def _read_result(box: Sandbox, run) -> dict[str, Any] | None:
    path = box.path / RESULT
    if not run.ok or not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except ValueError:
        return None


STATUS = {"error": "failed", "signal": "crashed", "timeout": "timeout", "output_limit": "output_limit", "ok": "failed"}


def _failure(run) -> dict[str, Any]:
    return {
        "status": STATUS[run.status],
        "exit_code": run.returncode,
        "stderr_tail": run.stderr_tail(),
        "process_wall_s": run.wall_s,
    }


def _isolation_summary() -> dict[str, Any]:
    info = isolation()
    return {k: info[k] for k in ("network_namespace", "pid_namespace", "user", "nproc_enforced", "rss_source")}
