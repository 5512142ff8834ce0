"""``coderlm evaluate``: a trained run (or several, pooled) on a test set, beside baselines trained on
the same training set; writes report.md, metrics.json, comparison.json and plots. Coverage and width of
the 50/80/90% intervals are reported, and again after conformal calibration when the model has one
(``coderlm calibrate``)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from coderlm.atomic import write_atomic
from coderlm.cli.flags import csv_list
from coderlm.data import read_dataset
from coderlm.decoding import central_interval
from coderlm.ensemble import POINTS, check_point, load_models, point_of, pooled_samples
from coderlm.evaluation import evaluate, markdown_table, to_json, write_report
from coderlm.evaluation.baselines import BASELINES, make_baseline
from coderlm.evaluation.baselines.regression_head import options_like, selection_like

LEVELS = (0.5, 0.8, 0.9)  # interval levels whose coverage is reported (before and after calibration)


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="evaluate a model on a test set; write a report",
        description="Spearman, Kendall, Pearson, MAE, MAPE per task and objective; interval "
        "coverage; per-group ranking; scatter plots; report.md and metrics.json.",
    )
    p.add_argument(
        "--model",
        required=True,
        action="append",
        help="run folder or saved model; repeat it to pool several models' samples",
    )
    p.add_argument("--data", required=True, help="test dataset (.jsonl or .parquet)")
    p.add_argument("--report", required=True, help="folder for report.md, metrics.json and plots")
    p.add_argument("--num-samples", type=int, help="samples per input (default: the model's, 64)")
    p.add_argument(
        "--baselines",
        type=csv_list,
        default=[],
        help=f"also train and evaluate these baselines on --train-data: {', '.join(BASELINES)}",
    )
    p.add_argument("--train-data", help="training set for --baselines (the one the model was trained on)")
    p.add_argument(
        "--val-data",
        help="the model's validation set (coderlm train --val): the regression-head baselines select their "
        "weights on it as the model did (its val_metric, evaluations and moving average)",
    )
    p.add_argument(
        "--point",
        choices=POINTS,
        default="median",
        help="the prediction scored: the median of the samples (default), or exact: the median of the model's "
        "distribution itself, walked without sampling noise (one model)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    evaluate_run(
        args.model,
        args.data,
        args.report,
        num_samples=args.num_samples,
        baselines=args.baselines,
        train_data=args.train_data,
        val_data=args.val_data,
        progress=not args.no_progress,
        point=args.point,
    )
    print(f"report: {Path(args.report) / 'report.md'}")
    return 0


def evaluate_run(
    model: str | Path | Sequence[str | Path],
    data: str | Path,
    report: str | Path,
    *,
    num_samples: int | None = None,
    baselines: Sequence[str] = (),
    train_data: str | Path | None = None,
    val_data: str | Path | None = None,
    seed: int = 0,
    progress: bool = True,
    point: str = "median",
) -> dict[str, Any]:
    """Evaluate a trained run on dataset ``data``; write report.md, metrics.json and plots to ``report``.

    Given several models, their samples are pooled (``coderlm.ensemble``); a regression-head baseline
    reads text as the first one does, and with ``val_data`` selects its weights on those rows as the first
    model's fit did (``selection_like``); ``point``: the samples' median or the exact one (``point_of``). A
    progress bar on stderr names the stage (sampling, each baseline)."""
    unknown = sorted(set(baselines) - set(BASELINES))
    if unknown:
        raise ValueError(f"unknown baseline(s) {unknown}; known: {sorted(BASELINES)}")
    if baselines and train_data is None:
        raise ValueError("baselines need --train-data (the same training set the model saw)")
    models = load_models([model] if isinstance(model, (str, Path)) else list(model))
    check_point(point, len(models))
    rlm = models[0]
    arrays = read_dataset(data).to_arrays(rlm.objectives_, "mask", absent="nan")
    train_arrays = read_dataset(train_data).to_arrays(rlm.objectives_, "mask", absent="nan") if baselines else None
    val_arrays = read_dataset(val_data).to_arrays(rlm.objectives_, "mask", absent="nan") if val_data else None
    stages = tqdm(total=1 + len(baselines), desc="evaluate", unit="stage", disable=not progress, dynamic_ncols=True)
    stages.set_postfix_str(f"sampling {len(arrays)} inputs with {len(models)} model(s)")
    samples = pooled_samples(models, arrays.texts, num_samples, seed, progress)
    stages.update(1)
    predicted = point_of(models, arrays.texts, samples, point)
    intervals = {level: central_interval(samples, level) for level in LEVELS}
    calibration = getattr(rlm, "calibration_", None) if len(models) == 1 else None  # pooled samples: not calibrated
    calibrated = (
        {level: calibration.interval(samples, level) for level in calibration.promised()} if calibration else None
    )
    groups = arrays.groups if any(arrays.groups) else None
    tasks = arrays.tasks if any(arrays.tasks) else None
    metrics = {
        "rlm": evaluate(predicted, arrays.targets, rlm.objectives_, tasks, groups, intervals, calibrated=calibrated)
    }
    rows = [_summary_row("rlm" if point == "median" else "rlm (exact median)", metrics["rlm"], rlm.objectives_)]
    for name in baselines:
        stages.set_postfix_str(f"baseline {name}: fit on {len(train_arrays)}, predict {len(arrays)}")
        head = name.startswith("regression_head")
        options = options_like(rlm.get_params()) if head else {}
        validation = {}
        if head and val_arrays is not None:
            options["training"] = selection_like(rlm, options.get("training"))
            validation = {
                "val_texts": val_arrays.texts,
                "val_targets": val_arrays.targets,
                "val_tasks": val_arrays.tasks,
            }
        baseline = make_baseline(name, **options)
        baseline.fit(train_arrays.texts, train_arrays.targets, tasks=train_arrays.tasks, **validation)
        predictions = baseline.predict(arrays.texts, tasks=arrays.tasks)
        metrics[name] = evaluate(predictions, arrays.targets, rlm.objectives_, tasks, groups)
        rows.append(_summary_row(name, metrics[name], rlm.objectives_))
        stages.update(1)
    stages.close()
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


def _summary_row(method: str, metrics: dict, objectives: Sequence[str]) -> dict[str, Any]:
    scope = metrics.get("all") or next(iter(metrics.values()))
    return {"method": method, **{f"{o} spearman": scope[o]["spearman"] for o in objectives}}
