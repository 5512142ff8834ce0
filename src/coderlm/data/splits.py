"""Train/validation/test splits: random by row, or by group (no group in two splits), and split files on disk.

Fractions are a mapping like ``{"train": 0.8, "val": 0.1, "test": 0.1}``: each in (0, 1], summing to 1
within 1e-6; the keys name the splits (and their files). Every split is deterministic for a seed
(``numpy.random.default_rng(seed)``) and returns sorted row indices, so split files keep the source's order.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from coderlm.data.io import JSONL_SUFFIXES, PARQUET_SUFFIXES, read_dataset, write_dataset
from coderlm.data.schema import Dataset, DatasetError

MANIFEST = "split.json"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def check_fractions(fractions: Mapping[str, float]) -> dict[str, float]:
    """``fractions`` as a dict of split name -> float, or ValueError saying what is wrong."""
    if not isinstance(fractions, Mapping) or not fractions:
        raise ValueError(f"fractions must be a non-empty mapping of split name -> fraction, got {fractions!r}")
    out = {}
    for name, fraction in fractions.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"split names must be non-empty strings, got {name!r}")
        if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real) or not 0 < fraction <= 1:
            raise ValueError(f"fractions[{name!r}] is {fraction!r}, expected a number in (0, 1]")
        out[name] = float(fraction)
    total = math.fsum(out.values())
    if abs(total - 1) > 1e-6:
        raise ValueError(f"fractions sum to {total:.9g}, expected 1 (within 1e-6): {out}")
    return out


def split_sizes(n: int, fractions: Mapping[str, float]) -> dict[str, int]:
    """Row counts summing to ``n``: floors of ``n * fraction``, then one more for the largest remainders."""
    fractions = check_fractions(fractions)
    exact = np.array([n * f for f in fractions.values()])
    sizes = np.floor(exact).astype(np.int64)
    order = np.argsort(-(exact - sizes), kind="stable")
    sizes[order[: n - int(sizes.sum())]] += 1
    return dict(zip(fractions, sizes.tolist(), strict=True))


def random_split(n: int, fractions: Mapping[str, float], seed: int) -> dict[str, np.ndarray]:
    """Disjoint sorted row indices covering ``range(n)``, sized by :func:`split_sizes`, shuffled by ``seed``."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    sizes = split_sizes(int(n), fractions)
    order = np.random.default_rng(_check_seed(seed)).permutation(int(n))
    out, start = {}, 0
    for name, size in sizes.items():
        out[name] = np.sort(order[start : start + size]).astype(np.int64)
        start += size
    return out


def group_split(groups: Sequence[str | None], fractions: Mapping[str, float], seed: int) -> dict[str, np.ndarray]:
    """Disjoint sorted row indices with every group wholly in one split; row counts aim at the fractions.

    Rows whose group is None or ``""`` are each their own group. Groups are shuffled by ``seed``, then placed
    largest first, each into the split furthest below its target row count.
    """
    fractions = check_fractions(fractions)
    units: dict[object, list[int]] = {}
    for i, group in enumerate(groups):
        if group is not None and not isinstance(group, str):
            raise ValueError(f"groups[{i}] is {type(group).__name__}, expected a string or None")
        units.setdefault(group if group else (i,), []).append(i)
    members = list(units.values())
    shuffled = np.random.default_rng(_check_seed(seed)).permutation(len(members))
    placed = sorted(shuffled.tolist(), key=lambda u: -len(members[u]))  # stable: ties keep the shuffled order
    names = list(fractions)
    targets = np.array([len(groups) * fractions[name] for name in names])
    counts = np.zeros(len(names))
    chosen: dict[str, list[int]] = {name: [] for name in names}
    for unit in placed:
        k = int(np.argmax(targets - counts))
        chosen[names[k]].extend(members[unit])
        counts[k] += len(members[unit])
    return {name: np.array(sorted(rows), dtype=np.int64) for name, rows in chosen.items()}


def split_dataset(
    source: str | os.PathLike | Dataset,
    out_dir: str | os.PathLike,
    fractions: Mapping[str, float],
    seed: int = 0,
    by_group: bool = False,
) -> dict[str, Path]:
    """Split a dataset file (or Dataset) into ``out_dir/{name}{suffix}`` per split, plus ``split.json``.

    The suffix is the source's (``.jsonl`` for a Dataset built in memory). ``split.json`` records the seed,
    fractions, row counts, source path and ``by_group``. All files are written to a staging folder first and
    moved in at the end (``split.json`` last), so an error leaves nothing half-written; existing files of the
    same names are replaced. Raises DatasetError if a split would be empty. Returns split name -> path.
    """
    fractions = check_fractions(fractions)
    dataset = source if isinstance(source, Dataset) else read_dataset(source)
    origin = dataset.source if isinstance(source, Dataset) else Path(source)
    suffix = origin.suffix.lower() if origin is not None else ".jsonl"
    if suffix not in JSONL_SUFFIXES + PARQUET_SUFFIXES:
        suffix = ".jsonl"
    files = {}
    for name in fractions:
        if not _NAME.fullmatch(name) or f"{name}{suffix}" == MANIFEST:
            raise DatasetError(origin, f"split name {name!r} cannot be a file name (letters, digits, _ . - only)")
        files[name] = f"{name}{suffix}"
    if by_group:
        indices = group_split([e.group for e in dataset], fractions, seed)
    else:
        indices = random_split(len(dataset), fractions, seed)
    empty = [name for name, rows in indices.items() if len(rows) == 0]
    if empty:
        unit = f"{len({e.group or (i,) for i, e in enumerate(dataset)})} groups" if by_group else f"{len(dataset)} rows"
        raise DatasetError(origin, f"split {empty[0]!r} would be empty ({unit}, fractions {fractions})")
    manifest = {
        "seed": int(seed),
        "fractions": fractions,
        "counts": {name: len(rows) for name, rows in indices.items()},
        "num_rows": len(dataset),
        "source": None if origin is None else str(origin),
        "by_group": bool(by_group),
        "files": files,
    }
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".split-", dir=out_dir))
    try:
        for name, rows in indices.items():
            write_dataset(staging / files[name], dataset.subset(rows))
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        for filename in [*files.values(), MANIFEST]:
            os.replace(staging / filename, out_dir / filename)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {name: out_dir / filename for name, filename in files.items()}


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return int(seed)
