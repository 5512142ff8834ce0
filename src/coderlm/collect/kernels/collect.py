"""Collect a kernel dataset: compile programs with TorchInductor, one row per generated kernel.

``collect_kernels(out, "kernelbench")`` writes, in the folder ``out``:

=========================  ==============================================================
``<source>.jsonl``         one row per kernel of >= ``min_us`` µs: ``text`` = the kernel's name
                           and source, ``targets = {"latency_us"}``, ``task`` = ``inductor_cpp``
                           (CPU) or ``triton`` (CUDA), ``group`` = the program; and one row per
                           program draw with the whole generated module, task ``<task>_graph``,
                           latency of the compiled module end to end. ``meta``: program, draw,
                           level, kernel name and kind, dtype, input shapes, the machine
``<source>.runs.jsonl``    one line per program draw tried: status (ok, error with its stage,
                           timeout, crashed, skipped: sizes that cannot be scaled down, or a
                           barren program), kernels kept and dropped, seconds per stage (build,
                           compile, capture, wait for the timing lock, time): the resume log
``<source>.stats.json``    counts per status and level, kernels kept, wall time (summed over resumes)
=========================  ==============================================================

Sources: ``kernelbench`` (``data``/level1..3, each file in ``draws`` sizes, ``programs.py``) or
``synthetic`` (``count`` generated programs of ``chains`` independent chains, ``synthetic.py``).
Once a draw of a program compiles to library calls only or times out, the program's remaining
draws are skipped (stage ``barren``): other sizes would not change that. Programs run in ``workers``
processes; compiling overlaps, timing takes a file lock (one program timed at a time, each worker
pinned to its own core). A fixed share of program draws (``rerun_share``, by a hash of the key) is
timed twice: ``meta.rerun_latency_us``, the two-run noise ceiling. Every row records the machine
(CPU model, threads, torch version, device); a resume on another machine is refused, so datasets
from different machines are never mixed.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import os
import queue
import time
import zlib
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import torch
from tqdm.auto import tqdm

from coderlm.atomic import write_atomic
from coderlm.collect.kernels.dataset import check_dataset, machine
from coderlm.collect.kernels.programs import LEVELS, KernelProgram, kernelbench_files, scaled_draws
from coderlm.collect.kernels.synthetic import synthetic_program
from coderlm.collect.kernels.texts import TEXT_REVISION
from coderlm.collect.kernels.worker import KernelWorker
from coderlm.collect.programs.corpora import shared_data
from coderlm.data.io import JsonlAppender, cut_torn_line, read_rows
from coderlm.options import OptionError

SOURCES = ("kernelbench", "synthetic")
STATUSES = ("ok", "error", "timeout", "crashed", "skipped")


@dataclasses.dataclass(frozen=True)
class Timing:
    repeats: int = 30  # measured calls per kernel; latency = their median
    warmups: int = 10  # calls before them, discarded
    min_us: float = 5.0  # kernels faster than this are dropped (counted in the runs log)
    rerun_share: float = 0.1  # share of program draws timed twice (the noise ceiling)
    timeout_s: float = 300.0  # per program: build, compile and time


@dataclasses.dataclass
class KernelReport:
    dataset: Path
    requested: int
    already_done: int
    tried: int
    kernels: int

    @property
    def left(self) -> int:
        """Programs not tried yet (a time limit stopped the run): a resume runs them."""
        return self.requested - self.already_done - self.tried


def program_jobs(
    source: str,
    *,
    data: str | Path | None = None,
    count: int | None = None,
    draws: int = 3,
    seed: int = 0,
    levels: Sequence[str] = LEVELS,
    chains: int = 5,
) -> Iterator[KernelProgram]:
    """The programs of ``source``: KernelBench files (the first ``count``) in ``draws`` sizes each, draw by
    draw, or ``count`` synthetic programs of ``chains`` independent chains each."""
    if source == "synthetic":
        if count is None or count < 1:
            raise OptionError("count", f"must be >= 1 for synthetic programs, got {count}")
        if chains < 1:
            raise OptionError("chains", f"must be >= 1, got {chains}")
        yield from (synthetic_program(i, seed, chains) for i in range(count))
        return
    files = kernelbench_files(Path(data) if data is not None else shared_data() / "kernelbench", levels)
    jobs = [job for path in files[:count] for job in scaled_draws(path, draws, seed)]
    # every program's first size, then every second size, ...: a time-limited run covers the programs
    # before it adds sizes, and a program's first draw has ended (barren or not) before its second starts
    yield from sorted(jobs, key=lambda job: job.draw)


def collect_kernels(
    out: str | Path,
    source: str = "kernelbench",
    *,
    data: str | Path | None = None,
    count: int | None = None,
    draws: int = 3,
    seed: int = 0,
    levels: Sequence[str] = LEVELS,
    chains: int = 5,
    device: str = "cpu",
    workers: int = 1,
    timing: Timing = Timing(),
    max_minutes: float | None = None,
    progress: bool = True,
) -> KernelReport:
    """Compile and time the programs of ``source`` into the folder ``out``, resuming what is there; with
    ``max_minutes``, start no program after that many minutes (the rest is left for a resume)."""
    if max_minutes is not None and max_minutes <= 0:
        raise OptionError("max_minutes", f"must be > 0, got {max_minutes}")
    if source not in SOURCES:
        raise OptionError("source", f"must be one of {list(SOURCES)}, got {source!r}")
    if workers < 1:
        raise OptionError("workers", f"must be >= 1, got {workers}")
    if device == "cuda" and not torch.cuda.is_available():
        raise OptionError("device", "is cuda, but CUDA is not available here")
    out = Path(out)
    if out.suffix == ".jsonl":
        raise OptionError("out", f"is a folder (it gets {source}.jsonl and logs), got {out}")
    out.mkdir(parents=True, exist_ok=True)
    dataset, log = out / f"{source}.jsonl", out / f"{source}.runs.jsonl"
    here = machine(device)
    check_dataset(dataset, here)
    jobs = list(program_jobs(source, data=data, count=count, draws=draws, seed=seed, levels=levels, chains=chains))
    cut_torn_line(log)
    logged = [row for _, row in read_rows(log)] if log.is_file() else []
    done = {row["key"] for row in logged}
    barren = {}  # program -> why its remaining draws are skipped
    for row in logged:
        generated = row.get("kernels", 0) + row.get("dropped_fast", 0)
        if why := _barren(row["key"], row["status"], generated):
            barren.setdefault(row["program"], why)
    todo = [job for job in jobs if job.key not in done]
    bar = tqdm(
        total=len(jobs),
        initial=len(jobs) - len(todo),
        desc=f"collect {source}",
        unit="prog",
        disable=not progress,
        dynamic_ncols=True,
    )
    began, tried, kept = time.perf_counter(), 0, 0
    stats = _Stats(out / f"{source}.stats.json", log, workers, timing, here)
    try:
        with JsonlAppender(dataset) as rows, JsonlAppender(log) as runs:
            deadline = None if max_minutes is None else time.monotonic() + 60.0 * max_minutes
            for job, result in _run(todo, workers, device, timing, out, barren, deadline):
                new_rows, dropped = _rows(job, result, here, timing.min_us, device)
                for row in new_rows:
                    rows.write(row)
                kernels = sum(1 for row in new_rows if not row["task"].endswith("_graph"))
                runs.write(_log_line(job, result, kernels, dropped))
                tried, kept = tried + 1, kept + kernels
                bar.update(1)
                bar.set_postfix(kernels=kept)
                if tried % 20 == 0:  # a killed run keeps its figures up to here
                    stats.write(time.perf_counter() - began)
    finally:
        bar.close()
        stats.write(time.perf_counter() - began)
    return KernelReport(dataset, len(jobs), len(jobs) - len(todo), tried, kept)


def _barren(key: str, status: str, generated: int) -> str:
    """Why the other draws of a program would give no kernel row, after its draw ``key`` ended with
    ``status`` and ``generated`` kernels; "" when they may. Drawn sizes change neither a program that
    compiles to library calls only nor one that compiles too slowly."""
    if status == "ok" and generated == 0:
        return f"{key} generated no kernel (library calls only)"
    if status == "timeout":
        return f"{key} timed out"
    return ""


def _run(
    jobs: list[KernelProgram],
    workers: int,
    device: str,
    timing: Timing,
    out: Path,
    barren: dict[str, str],
    deadline: float | None,
) -> Iterator[tuple[KernelProgram, dict]]:
    """(job, result) as programs finish, ``workers`` at a time; each worker pinned to its own core. The
    remaining draws of a program in ``barren`` (program -> why) are skipped; the dict grows as draws finish.
    No job starts after ``deadline`` (``time.monotonic()``)."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [None]
    pending = iter(jobs)
    lock = str(out / ".timing.lock")

    def serve(index: int) -> None:
        with KernelWorker(log=out / f".worker-{index}.log") as worker:
            for job in pending:  # the iterator is shared: each worker takes the next program
                if deadline is not None and time.monotonic() > deadline:
                    return  # this job and the rest stay unlogged: a resume runs them
                if job.skip:
                    finished.put((job, {"status": "skipped", "stage": "scale", "error": job.skip}))
                    continue
                if job.program in barren:
                    finished.put((job, {"status": "skipped", "stage": "barren", "error": barren[job.program]}))
                    continue
                rerun = zlib.crc32(job.key.encode()) % 1000 < 1000 * timing.rerun_share
                request = {
                    "source": job.source,
                    "program": job.program,
                    "dtype": job.dtype,
                    "device": device,
                    "repeats": timing.repeats,
                    "warmups": timing.warmups,
                    "rerun": rerun,
                    "lock": lock,
                    "core": cores[index % len(cores)],
                }
                result = worker.run(request, timing.timeout_s)
                if why := _barren(job.key, result["status"], len(result.get("kernels", ()))):
                    barren.setdefault(job.program, why)
                finished.put((job, result))

    finished: queue.Queue = queue.Queue()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(serve, i) for i in range(workers)]
        while True:
            try:
                yield finished.get(timeout=1.0)
            except queue.Empty:
                for future in futures:
                    if future.done() and future.exception() is not None:
                        raise future.exception() from None
                if all(future.done() for future in futures) and finished.empty():
                    return  # every job ran, or the deadline stopped the workers


def _rows(job: KernelProgram, result: dict, here: dict, min_us: float, device: str) -> tuple[list[dict], int]:
    """Dataset rows of one program draw, and how many kernels were too fast to keep."""
    if result["status"] != "ok":
        return [], 0
    task = "triton" if device == "cuda" else "inductor_cpp"
    base = {
        "program": job.program,
        "draw": job.draw,
        "level": job.level,
        "dtype": job.dtype,
        "shapes": result["input_shapes"],
        "machine": here,
        "text_revision": TEXT_REVISION,
    }
    rows, dropped = [], 0
    for kernel in result["kernels"]:
        latency = kernel["latency_us"]
        if latency is None or latency < min_us:
            dropped += 1
            continue
        meta = base | {"kernel": kernel["name"], "kind": kernel["kind"]}
        if kernel.get("rerun_latency_us") is not None:
            meta["rerun_latency_us"] = kernel["rerun_latency_us"]
        rows.append(
            {
                "text": kernel["text"],
                "targets": {"latency_us": latency},
                "task": task,
                "group": job.program,
                "meta": meta,
            }
        )
    graph = result["graph"]
    meta = base | {"extern_calls": graph["extern_calls"], "kernels": len(result["kernels"]), "source": job.source}
    if graph.get("rerun_latency_us") is not None:
        meta["rerun_latency_us"] = graph["rerun_latency_us"]
    rows.append(
        {
            "text": graph["text"],
            "targets": {"latency_us": graph["latency_us"]},
            "task": f"{task}_graph",
            "group": job.program,
            "meta": meta,
        }
    )
    return rows, dropped


def _log_line(job: KernelProgram, result: dict, kept: int, dropped: int) -> dict:
    line = {"key": job.key, "program": job.program, "level": job.level, "status": result["status"]}
    if result["status"] == "ok":
        return line | {
            "kernels": kept,
            "dropped_fast": dropped,
            "compile_s": result["compile_s"],
            "seconds": result.get("seconds", {}),
            "extern_calls": result["graph"]["extern_calls"],
        }
    return line | {"stage": result.get("stage"), "error": result.get("error", "")[:1000]}


class _Stats:
    """``<source>.stats.json``: counts per status and level from the runs log, wall time summed over runs."""

    def __init__(self, path: Path, log: Path, workers: int, timing: Timing, here: dict) -> None:
        self.path, self.log, self.workers, self.timing, self.here = path, log, workers, timing, here
        self.before = _read_json(path)  # earlier runs' totals

    def write(self, wall_s: float) -> None:
        statuses, levels, kernels = Counter(), {}, 0
        for _, row in read_rows(self.log) if self.log.is_file() else ():
            statuses[row["status"]] += 1
            levels.setdefault(row["level"], Counter())[row["status"]] += 1
            kernels += row.get("kernels", 0)
        stats = {
            "programs": dict(statuses),
            "by_level": {level: dict(counts) for level, counts in sorted(levels.items())},
            "kernels": kernels,
            "wall_s": self.before.get("wall_s", 0.0) + wall_s,
            "sessions": self.before.get("sessions", 0) + 1,
            "workers": self.workers,
            "timing": dataclasses.asdict(self.timing),
            "machine": self.here,
        }
        write_atomic(self.path, json.dumps(stats, indent=2) + "\n")


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def compile_kernels(path: str | Path, device: str = "cpu", timeout_s: float = 300.0) -> list[tuple[str, str]]:
    """(kernel name, text as the collector writes it) of every kernel Inductor generates for the PyTorch
    program at ``path`` (KernelBench's convention: Model, get_inputs, get_init_inputs), untimed."""
    path = Path(path)
    with KernelWorker() as worker:
        result = worker.run(
            {"source": path.read_text(), "program": str(path), "device": device, "time": False}, timeout_s
        )
    if result["status"] != "ok":
        raise ValueError(f"{path}: {result['status']} while compiling ({result.get('stage')}): {result.get('error')}")
    if not result["kernels"]:
        raise ValueError(
            f"{path}: Inductor generated no kernel (only library calls: {result['graph']['extern_calls']})"
        )
    return [(kernel["name"], kernel["text"]) for kernel in result["kernels"]]
