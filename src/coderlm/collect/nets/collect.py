"""Collect a NAS-Bench-201 dataset: cell -> ONNX -> text, with labels.

The ONNX graph is built directly (``nb201_onnx.build_onnx``, milliseconds), not exported from
PyTorch (``export_onnx(build_network(cell))``, seconds): the same graph, so the same text and
labels, byte for byte (docs/onnx_text.md, "NAS-Bench-201 without the exporter").

Each row of the output JSONL (the project's dataset format) holds the network as ONNX
text, its labels as targets, the cell string as its group, and
``meta = {"space", "cell", "cells_per_stage", "text_style", "builder"}``. Labels:

=============  ======================================================================
``flops``      2 x multiply-accumulates of Conv/Gemm/MatMul, exact from the graph
``macs``       multiply-accumulates
``params``     parameter count of the graph's weights
``latency_cpu`` median onnxruntime latency on this CPU, ms (warm-up runs discarded)
=============  ======================================================================

With ``join_csv`` (``../shared/data/nasbench201/nasbench201.csv``), every numeric column
of the matching row (accuracies, 27 device latencies) is added to the targets.

Resume: rows are appended one at a time, flushed and fsynced; a rerun reads the cells
already in the file and collects only the others (a half-written last line, from a
kill, is cut off first). Rows made with other settings (``cells_per_stage``, ``text_style``,
or an older ``builder`` revision) stop the resume with an error naming the line, instead of
mixing two kinds of text in one dataset. Networks are built in ``workers`` processes; latency is
measured in the same workers, so with ``workers > 1`` concurrent work adds noise to it.
"""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Iterator, Sequence
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from coderlm.collect.nets.nb201 import BUILDER, all_cells, parse_cell
from coderlm.data.io import JsonlAppender, cut_torn_line, read_rows
from coderlm.options import OptionError

LABELS = ("flops", "macs", "params", "latency_cpu")


@dataclasses.dataclass(frozen=True)
class NasJob:
    cell: str
    labels: tuple[str, ...]
    cells_per_stage: int
    text_style: str
    latency_threads: int
    batch_size: int


@dataclasses.dataclass
class CollectReport:
    path: Path
    requested: int
    already_done: int
    collected: int


def sample_cells(count: int | None, seed: int = 0) -> list[str]:
    """``count`` distinct NB201 cell strings in a seeded random order (all 15,625 when None)."""
    cells = all_cells()
    order = np.random.default_rng(seed).permutation(len(cells))
    chosen = [cells[i] for i in order]
    if count is not None:
        if not 1 <= count <= len(cells):
            raise OptionError("count", f"must be in 1..{len(cells)}, got {count}")
        chosen = chosen[:count]
    return chosen


def collect_one(job: NasJob) -> dict[str, Any]:
    """Build, serialize and label one network; a row in the dataset format."""
    # onnx loads here, in the process that builds, not in a parent that only writes rows
    from coderlm.collect.nets.nb201_onnx import build_onnx
    from coderlm.collect.nets.onnx_cost import graph_cost
    from coderlm.collect.nets.onnx_text import onnx_to_text

    # the graph export_onnx(build_network(cell)) gives, built directly; weights seeded (they never reach the text)
    model = build_onnx(job.cell, job.cells_per_stage, job.batch_size)
    targets: dict[str, float] = {}
    if {"flops", "macs", "params"} & set(job.labels):
        cost = graph_cost(model)
        targets |= {name: float(cost[name]) for name in ("flops", "macs", "params") if name in job.labels}
    if "latency_cpu" in job.labels:
        from coderlm.collect.nets.latency import measure_latency  # onnxruntime: only with this label

        result = measure_latency(model, batch_size=job.batch_size, threads=job.latency_threads)
        targets["latency_cpu"] = float(result["median_ms"])
    meta = {
        "space": "nb201",
        "cell": job.cell,
        "cells_per_stage": job.cells_per_stage,
        "text_style": job.text_style,
        "builder": BUILDER,
    }
    return {"text": onnx_to_text(model, style=job.text_style), "targets": targets, "group": job.cell, "meta": meta}


def read_join_csv(path: str | Path) -> dict[str, dict[str, float]]:
    """Numeric columns of the NAS-Bench-201 table, by cell string."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    table: dict[str, dict[str, float]] = {}
    with open(path, newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            if "arch" not in row:
                raise ValueError(f"{path}:{line}: no 'arch' column")
            values = {}
            for name, value in row.items():
                if name in ("arch", "index") or value in (None, ""):
                    continue
                try:
                    values[name] = float(value)
                except ValueError as exc:
                    raise ValueError(f"{path}:{line}: column {name!r} is not a number: {value!r}") from exc
            table[row["arch"]] = values
    return table


def done_cells(path: Path, settings: dict[str, Any] | None = None) -> set[str]:
    """Cells already in ``path``; a partial last line (an interrupted write) is cut off first.

    ``settings`` (meta key -> value) must match every row's meta, else ``ValueError`` names the
    line; rows without ``builder`` are revision 1, without ``text_style`` are ``compact``."""
    if not path.is_file():
        return set()
    cut_torn_line(path)
    cells = set()
    for number, row in read_rows(path):
        try:
            meta = row["meta"]
            cells.add(meta["cell"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: not a row written by the NAS collector ({exc})") from exc
        found = {"builder": 1, "text_style": "compact"} | meta
        for key, wanted in (settings or {}).items():
            if found.get(key) != wanted:
                raise ValueError(
                    f"{path}:{number}: collected with {key}={found.get(key)!r}, this run asks for {wanted!r}; "
                    "collect into another out (one dataset holds one kind of text)"
                )
    return cells


def collect_nas(
    out: str | Path,
    count: int | None = 200,
    labels: Sequence[str] = ("flops", "params", "latency_cpu"),
    *,
    seed: int = 0,
    workers: int = 1,
    cells_per_stage: int = 5,
    text_style: str = "compact",
    latency_threads: int = 1,
    batch_size: int = 1,
    join_csv: str | Path | None = None,
    cells: Sequence[str] | None = None,
    progress: bool = True,
) -> CollectReport:
    """Collect ``count`` NB201 networks into ``out`` (a .jsonl file, or a folder to hold nb201.jsonl),
    resuming what is already there. ``cells`` collects exactly these cell strings instead (``count``
    and ``seed`` are then unused); an invalid one raises ``ValueError`` naming it before any work."""
    unknown = sorted(set(labels) - set(LABELS))
    if unknown:
        raise ValueError(f"unknown label(s) {unknown}; known: {list(LABELS)}")
    if workers < 1:
        raise OptionError("workers", f"must be >= 1, got {workers}")
    joined = read_join_csv(join_csv) if join_csv is not None else None
    out = Path(out)
    if out.suffix != ".jsonl":  # a folder: the dataset goes inside it
        out = out / "nb201.jsonl"
    if cells is None:
        cells = sample_cells(count, seed)
    else:
        for cell in cells:
            parse_cell(cell)
        cells = list(dict.fromkeys(cells))
    done = done_cells(out, {"cells_per_stage": cells_per_stage, "text_style": text_style, "builder": BUILDER})
    todo = [c for c in cells if c not in done]
    jobs = [NasJob(c, tuple(labels), cells_per_stage, text_style, latency_threads, batch_size) for c in todo]
    out.parent.mkdir(parents=True, exist_ok=True)
    bar = None
    if progress:
        bar = tqdm(total=len(cells), initial=len(cells) - len(todo), desc="collect nb201", unit="net")
    collected = 0
    with JsonlAppender(out) as rows:
        for row in _run(jobs, workers):
            if joined is not None:
                row["targets"] |= joined.get(row["meta"]["cell"], {})
            rows.write(row)
            collected += 1
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return CollectReport(out, len(cells), len(cells) - len(todo), collected)


def _run(jobs: list[NasJob], workers: int) -> Iterator[dict[str, Any]]:
    """Rows in job order, from this process or from ``workers`` spawned ones."""
    if workers == 1 or len(jobs) <= 1:
        yield from map(collect_one, jobs)
        return
    with get_context("spawn").Pool(workers) as pool:
        yield from pool.imap(collect_one, jobs, chunksize=8)
