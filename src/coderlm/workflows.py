"""What the command line does, as library functions: train a run folder from dataset
files, predict for inputs, evaluate a run on a test set (optionally beside baselines).

Every function validates all of its inputs before it writes anything.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from coderlm.atomic import write_atomic
from coderlm.data import DatasetError, read_dataset
from coderlm.decoding import central_interval, point_estimate
from coderlm.ensemble import load_models, pooled_samples
from coderlm.estimator import RegressionLM
from coderlm.numbers.formats import IEEE, P10, NumberFormat

log = logging.getLogger("coderlm")

ESTIMATOR_OPTIONS = ("vocab_size", "pretokenize", "max_input_len", "num_samples", "temperature", "batch_size", "device")


def number_format(kind: str = "p10", **options: Any) -> NumberFormat:
    """A number format from its kind and (only the relevant) options; unknown options raise."""
    fields = {
        "p10": {"mantissa_digits": "digits", "min_exponent": "min_exponent", "max_exponent": "max_exponent"},
        "ieee": {"mantissa_digits": "mantissa_digits", "exponent_digits": "exponent_digits"},
    }
    if kind not in fields:
        raise ValueError(f"number format must be 'p10' or 'ieee', got {kind!r}")
    given = {k: v for k, v in options.items() if v is not None}
    wrong = sorted(set(given) - set(fields[kind]))
    if wrong:
        raise ValueError(f"option(s) {wrong} do not apply to the {kind} number format")
    cls = P10 if kind == "p10" else IEEE
    return cls(**{fields[kind][k]: v for k, v in given.items()})


def train_run(
    data: str | Path,
    out: str | Path,
    *,
    val: str | Path | None = None,
    objectives: Sequence[str] | None = None,
    missing: str = "skip",
    number: dict[str, Any] | None = None,
    specials: Sequence[str] = (),
    model: dict[str, Any] | None = None,
    training: dict[str, Any] | None = None,
    estimator: dict[str, Any] | None = None,
    resume: bool = False,
    init: str | Path | None = None,
) -> RegressionLM:
    """Train a RegressionLM on dataset file ``data``; the run folder ``out`` becomes a loadable model.

    ``init``: a trained model or finished run folder to fine-tune from (see ``RegressionLM.fit``).

    ``missing``: "skip" drops rows lacking an objective, "mask" keeps them and leaves the
    missing objective out of the loss, "special" learns missing values as a ``<NaN>`` token.
    """
    train_set = read_dataset(data)
    arrays = train_set.to_arrays(objectives, missing)
    if len(arrays) == 0:
        raise DatasetError(data, f"no rows left for training after skipping {arrays.skipped} with missing targets")
    if arrays.skipped:
        log.warning(
            "%s: skipped %d row(s) with missing targets (use --missing mask to keep them)", data, arrays.skipped
        )
    val_arrays = read_dataset(val).to_arrays(arrays.objectives, missing) if val is not None else None
    specials = tuple(specials) + (("nan",) if missing == "special" and "nan" not in specials else ())
    unknown = sorted(set(estimator or {}) - set(ESTIMATOR_OPTIONS))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown}")
    fmt = number_format(**(number or {})) if number or init is None else None  # None: fine-tuning keeps init's format
    rlm = RegressionLM(fmt, specials=specials, model=model or None, training=training or None, **(estimator or {}))
    out = Path(out)
    if not resume and (out / "checkpoints").exists():
        raise ValueError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    rlm.fit(
        arrays.texts,
        arrays.targets,
        missing="mask" if missing == "mask" else "error",
        tasks=arrays.tasks,
        objectives=arrays.objectives,
        val_texts=val_arrays.texts if val_arrays is not None else None,
        val_targets=val_arrays.targets if val_arrays is not None else None,
        val_tasks=val_arrays.tasks if val_arrays is not None else None,
        run_dir=out,
        resume=resume,
        init=init,
    )
    record = {
        "data": str(data),
        "val": str(val) if val else None,
        "init": str(init) if init else None,
        "objectives": arrays.objectives,
        "missing": missing,
        "skipped": arrays.skipped,
        "fit_report": rlm.fit_report_,
    }
    write_atomic(out / "train_summary.json", json.dumps(record, indent=2) + "\n")
    return rlm


def read_inputs(paths: Sequence[str], onnx_style: str = "compact") -> list[tuple[str, str]]:
    """(name, text) pairs: a ``.jsonl``/``.parquet`` dataset gives one per row (named FILE:LINE),
    an ``.onnx`` file its graph as text (``onnx_style``, as ``coderlm collect`` writes it),
    ``-`` reads one text from stdin, any other file is one text."""
    inputs: list[tuple[str, str]] = []
    for path in paths:
        suffix = Path(path).suffix
        if path == "-":
            inputs.append(("<stdin>", sys.stdin.read()))
        elif suffix in (".jsonl", ".parquet"):
            dataset = read_dataset(path)
            inputs.extend((f"{path}:{i + 1}", example.text) for i, example in enumerate(dataset))
        elif suffix == ".onnx":
            from coderlm.collect.nets.onnx_export import load_onnx
            from coderlm.collect.nets.onnx_text import onnx_to_text

            model = load_onnx(path)  # its errors name the file
            try:
                inputs.append((path, onnx_to_text(model, style=onnx_style)))
            except ValueError as exc:
                raise ValueError(f"{path}: {exc}") from exc
        else:
            file = Path(path)
            if not file.is_file():
                raise FileNotFoundError(f"{path}: no such file")
            try:
                inputs.append((path, file.read_text()))
            except UnicodeDecodeError as exc:
                raise ValueError(f"{path}: not a UTF-8 text file") from exc
    for name, text in inputs:
        if not text:
            raise ValueError(f"{name}: empty input")
    return inputs


def predict_records(
    rlm: RegressionLM | Sequence[RegressionLM],
    inputs: list[tuple[str, str]],
    level: float = 0.9,
    num_samples: int | None = None,
    all_samples: bool = False,
    seed: int | None = 0,
) -> list[dict]:
    """One flat record per input: median, interval bounds (and samples) per objective.

    Given several models, each draws ``num_samples`` and the estimates come from all of them pooled."""
    models = [rlm] if isinstance(rlm, RegressionLM) else list(rlm)
    samples = pooled_samples(models, [text for _, text in inputs], num_samples, seed)
    rlm = models[0]
    medians, intervals = point_estimate(samples), central_interval(samples, level)
    records = []
    for i, (name, _) in enumerate(inputs):
        record: dict[str, Any] = {"input": name}
        for j, objective in enumerate(rlm.objectives_):
            record[objective] = _num(medians[i, j])
            record[f"{objective}_lower"] = _num(intervals[i, j, 0])
            record[f"{objective}_upper"] = _num(intervals[i, j, 1])
            if all_samples:
                record[f"{objective}_samples"] = [_num(v) for v in samples[i, :, j]]
        records.append(record)
    return records


def evaluate_run(
    model: str | Path | Sequence[str | Path],
    data: str | Path,
    report: str | Path,
    *,
    num_samples: int | None = None,
    baselines: Sequence[str] = (),
    train_data: str | Path | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Evaluate a trained run on dataset ``data``; write report.md, metrics.json and plots to ``report``.

    Given several models, their samples are pooled (``coderlm.ensemble``); baselines read text as
    the first one does."""
    from coderlm.evaluation import evaluate, markdown_table, to_json, write_report

    models = load_models([model] if isinstance(model, (str, Path)) else list(model))
    rlm = models[0]
    arrays = read_dataset(data).to_arrays(rlm.objectives_, "mask")
    if baselines and train_data is None:
        raise ValueError("baselines need --train-data (the same training set the model saw)")
    train_arrays = read_dataset(train_data).to_arrays(rlm.objectives_, "mask") if baselines else None
    samples = pooled_samples(models, arrays.texts, num_samples, seed)
    predicted = point_estimate(samples)
    intervals = {level: central_interval(samples, level) for level in (0.5, 0.9)}
    groups = arrays.groups if any(arrays.groups) else None
    tasks = arrays.tasks if any(arrays.tasks) else None
    metrics = {"rlm": evaluate(predicted, arrays.targets, rlm.objectives_, tasks, groups, intervals)}
    rows = [_summary_row("rlm", metrics["rlm"], rlm.objectives_)]
    for name in baselines:
        from coderlm.evaluation.baselines import make_baseline

        baseline = make_baseline(name, **baseline_options(name, rlm))
        baseline.fit(train_arrays.texts, train_arrays.targets, tasks=train_arrays.tasks)
        predictions = baseline.predict(arrays.texts, tasks=arrays.tasks)
        metrics[name] = evaluate(predictions, arrays.targets, rlm.objectives_, tasks, groups)
        rows.append(_summary_row(name, metrics[name], rlm.objectives_))
    write_report(
        report,
        metrics["rlm"],
        predicted,
        arrays.targets,
        rlm.objectives_,
        tasks,
        extra_tables=[("Spearman by method", rows)],
    )
    write_atomic(Path(report) / "comparison.json", json.dumps(to_json(metrics), indent=2) + "\n")
    print(markdown_table(rows))
    return metrics


def baseline_options(name: str, rlm: RegressionLM) -> dict[str, Any]:
    """A neural baseline reads text as ``rlm`` does (vocabulary, pre-tokenization, context, widths,
    training budget): the comparison then isolates the regression head. Others need no options."""
    if not name.startswith("regression_head"):
        return {}
    options = {
        "vocab_size": rlm.vocab_size,
        "max_input_len": rlm.max_input_len,
        "model": rlm.model,
        "training": rlm.training,
        "device": rlm.device,
    }
    if rlm.pretokenize in ("code", "lines"):  # a learned BPE's settings; a pretrained encoder's are its own
        options["pretokenize"] = rlm.pretokenize
    return options


def _summary_row(method: str, metrics: dict, objectives: Sequence[str]) -> dict[str, Any]:
    scope = metrics.get("all") or next(iter(metrics.values()))
    return {"method": method, **{f"{o} spearman": scope[o]["spearman"] for o in objectives}}


def _num(value: float) -> float | None:
    return None if not np.isfinite(value) else float(value)
