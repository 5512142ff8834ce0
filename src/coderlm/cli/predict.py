"""``coderlm predict``: predictions for files, datasets, ``.onnx`` models or stdin, as JSON lines or CSV.

Each input is a name and the text a model reads: a ``.jsonl`` / ``.parquet`` dataset gives one
per row (named ``FILE:LINE``); an ``.onnx`` model gives its graph as text, serialized exactly as
``coderlm collect nas`` writes it (the ``onnx`` extra); with ``--kernels`` a ``.py`` PyTorch program
gives one input per kernel TorchInductor generates for it (named ``FILE:kernel``), written as
``coderlm collect kernels`` writes them, and a ``.cpp`` kernel is read as the collector writes it (its loop
summary added where missing, ``texts.as_kernel_text``); ``-`` is one text from standard input; any other file is one
text (UTF-8).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from coderlm.collect.kernels.collect import compile_kernels
from coderlm.collect.kernels.texts import as_kernel_text
from coderlm.collect.nets import TEXT_STYLES
from coderlm.data import read_dataset
from coderlm.decoding import central_interval
from coderlm.ensemble import POINTS, check_point, load_models, point_of, pooled_samples
from coderlm.estimator import RegressionLM


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "predict",
        help="predict for input files, a dataset, or stdin",
        description="Each INPUT is a text file (one input), an .onnx model (serialized as "
        "coderlm collect does), a .jsonl/.parquet dataset (one input per row), or - for stdin. "
        "Prints one record per input.",
    )
    p.add_argument(
        "--model",
        required=True,
        action="append",
        help="run folder or saved model; repeat it to pool several models' samples",
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT")
    p.add_argument("--level", type=float, default=0.9, help="central interval level (default 0.9)")
    p.add_argument("--num-samples", type=int, help="samples per input (default: the model's, 64)")
    p.add_argument("--all-samples", action="store_true", help="also print every sample")
    p.add_argument(
        "--point",
        choices=POINTS,
        default="median",
        help="the prediction: the median of the samples (default), or exact: the median of the model's "
        "distribution itself, walked in one decode without sampling noise (one model)",
    )
    p.add_argument("--output", choices=["json", "csv"], default="json", help="JSON lines (default) or CSV")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr while sampling")
    p.add_argument(
        "--kernels",
        action="store_true",
        help=".py inputs are PyTorch programs (Model, get_inputs, get_init_inputs): compile each with TorchInductor "
        "and predict every kernel it generates (named FILE:kernel), as coderlm collect kernels writes them; .cpp "
        "inputs are kernels (a loop summary added where missing)",
    )
    p.add_argument(
        "--onnx-style",
        choices=TEXT_STYLES,
        default="compact",
        help="how .onnx inputs become text; use the style the training data was collected with",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    models = load_models(args.model)
    inputs = read_inputs(args.inputs, args.onnx_style, kernels=args.kernels)
    progress = not args.no_progress and len(inputs) > 1
    records = predict_records(
        models, inputs, args.level, args.num_samples, args.all_samples, args.seed, progress, args.point
    )
    if args.output == "json":
        for record in records:
            print(json.dumps(record))
    else:
        writer = csv.DictWriter(sys.stdout, fieldnames=list(records[0]))
        writer.writeheader()
        for record in records:
            writer.writerow({k: " ".join(map(str, v)) if isinstance(v, list) else v for k, v in record.items()})
    return 0


def _read_text(path: str) -> str:
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        return file.read_text()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a UTF-8 text file") from exc


def read_inputs(paths: Sequence[str], onnx_style: str = "compact", kernels: bool = False) -> list[tuple[str, str]]:
    """(name, text) pairs in the order given; errors name the file."""
    inputs: list[tuple[str, str]] = []
    for path in paths:
        suffix = Path(path).suffix
        if path == "-":
            inputs.append(("<stdin>", sys.stdin.read()))
        elif suffix in (".jsonl", ".parquet"):
            dataset = read_dataset(path)
            inputs.extend((f"{path}:{i + 1}", example.text) for i, example in enumerate(dataset))
        elif suffix == ".onnx":
            inputs.append((path, onnx_file_text(path, onnx_style)))
        elif suffix == ".py" and kernels:
            inputs.extend((f"{path}:{name}", text) for name, text in compile_kernels(path))
        elif suffix == ".cpp" and kernels:
            inputs.append((path, as_kernel_text(_read_text(path))))
        else:
            inputs.append((path, _read_text(path)))
    for name, text in inputs:
        if not text:
            raise ValueError(f"{name}: empty input")
    return inputs


def onnx_file_text(path: str | Path, style: str = "compact") -> str:
    """An ``.onnx`` file's graph as text, as the collector writes it."""
    # the onnx extra, loaded only when an .onnx input is given
    from coderlm.collect.nets.onnx_export import load_onnx
    from coderlm.collect.nets.onnx_text import onnx_to_text

    model = load_onnx(path)  # its errors name the file
    try:
        return onnx_to_text(model, style=style)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from exc


def predict_records(
    rlm: RegressionLM | Sequence[RegressionLM],
    inputs: list[tuple[str, str]],
    level: float = 0.9,
    num_samples: int | None = None,
    all_samples: bool = False,
    seed: int | None = 0,
    progress: bool = False,
    point: str = "median",
) -> list[dict]:
    """One flat record per input: median (``point``: of the samples, or exact: ``ensemble.point_of``), interval
    bounds (and samples) per objective. A model calibrated for ``level`` (``coderlm calibrate``) gives its
    conformal interval (``calibrated``: true).

    Given several models, each draws ``num_samples`` and the estimates come from all of them pooled
    (``progress``: a bar on stderr per model)."""
    models = [rlm] if isinstance(rlm, RegressionLM) else list(rlm)
    check_point(point, len(models))
    samples = pooled_samples(models, [text for _, text in inputs], num_samples, seed, progress)
    calibration = getattr(models[0], "calibration_", None) if len(models) == 1 else None  # pooled: not calibrated
    calibrated = calibration is not None and level in calibration.promised()
    medians = point_of(models, [text for _, text in inputs], samples, point)
    intervals = calibration.interval(samples, level) if calibrated else central_interval(samples, level)
    records = []
    for i, (name, _) in enumerate(inputs):
        record: dict[str, Any] = {"input": name, "calibrated": calibrated}
        for j, objective in enumerate(models[0].objectives_):
            record[objective] = _num(medians[i, j])
            record[f"{objective}_lower"] = _num(intervals[i, j, 0])
            record[f"{objective}_upper"] = _num(intervals[i, j, 1])
            if all_samples:
                record[f"{objective}_samples"] = [_num(v) for v in samples[i, :, j]]
        records.append(record)
    return records


def _num(value: float) -> float | None:
    return None if not np.isfinite(value) else float(value)
