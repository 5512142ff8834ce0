"""A kernel dataset's identity and upkeep: the machine its labels were measured on, the check a resume
passes (same machine, same text revision), and rewriting an older dataset's texts in place."""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import Any

import torch

from coderlm.atomic import write_atomic
from coderlm.collect.kernels.texts import TEXT_REVISION, annotated, kernel_text
from coderlm.data.io import cut_torn_line, read_rows


def machine(device: str = "cpu") -> dict[str, Any]:
    """What the labels depend on: CPU model, threads, torch version, device (and GPU name)."""
    record = {"cpu": _cpu_model(), "threads": 1, "torch": torch.__version__, "device": device}
    if device == "cuda":
        record["gpu"] = torch.cuda.get_device_name(0)
    return record


def check_dataset(dataset: Path, here: dict) -> None:
    """Refuse to add rows measured here to a dataset measured on another machine, or written with another
    text revision."""
    cut_torn_line(dataset)
    if not dataset.is_file():
        return
    for number, row in read_rows(dataset):
        meta = row.get("meta", {}) if isinstance(row, dict) else {}
        if meta.get("machine") != here:
            raise ValueError(
                f"{dataset}:{number}: measured on {meta.get('machine')}, this run measures on {here}; "
                "collect into another out (latencies of two machines do not mix)"
            )
        if meta.get("text_revision", 1) != TEXT_REVISION:
            raise ValueError(
                f"{dataset}:{number}: text revision {meta.get('text_revision', 1)}, this run writes "
                f"{TEXT_REVISION}; rewrite the dataset's texts first (coderlm collect kernels --rewrite-text)"
            )
        return  # every row of a dataset is written by runs that passed this check


def rewrite_texts(dataset: str | Path) -> int:
    """Rewrite the texts of an older dataset as this version writes them (the labels stay: a kernel's text
    follows from its stored source), atomically; returns how many rows changed."""
    dataset = Path(dataset)
    if not dataset.is_file():
        raise FileNotFoundError(f"{dataset}: no kernel dataset here")
    cut_torn_line(dataset)
    rows, changed = [], 0
    for number, row in read_rows(dataset):
        try:
            meta, text, task = row["meta"], row["text"], row["task"]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{dataset}:{number}: not a row written by the kernel collector ({exc})") from exc
        if meta.get("text_revision", 1) < TEXT_REVISION:
            if task.endswith("_graph"):
                row["text"] = annotated("", text)
            else:
                head, _, body = text.partition("\n")
                if head != f"// {meta.get('kernel')}":
                    raise ValueError(f"{dataset}:{number}: kernel text does not start with its name ({head[:80]!r})")
                row["text"] = kernel_text(meta["kernel"], body)
            meta["text_revision"] = TEXT_REVISION
            changed += 1
        rows.append(row)
    if changed:
        write_atomic(dataset, "".join(json.dumps(row) + "\n" for row in rows))
    return changed


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
