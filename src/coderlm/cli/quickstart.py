"""``coderlm quickstart``: a latency predictor for this machine from 20 measurements (about a minute).

The shipped model ``builtin:nb201`` reads a NAS-Bench-201 network as ONNX text and writes its
accuracy and its latency on 13 devices. This machine is a new device:

1. measure: build networks' ONNX graphs and time them here with onnxruntime: 20 to learn from and
   200 to test on (all different networks; ``--calibration M``: M more to calibrate on);
2. read this CPU's latency out of the shipped model: a ridge regression, fitted on the 20, over the
   model's predicted latencies on its 13 source devices (``coderlm readout``; no training), applied to
   every sample; with ``--finetune`` the shipped model is also fine-tuned on the 20 (``coderlm train
   --init builtin:nb201 --context init``) and compared;
3. calibrate the intervals on the same 20, each read out by the ridge fitted on the other 19
   (cross-conformal: 90% intervals that cover 90%; with ``--calibration M``, split conformal on the M);
4. predict the 200 others and compare with what was measured, beside the baselines: gradient-boosted
   trees on the same 20, the shipped model zero-shot (rank by its predicted latency on the source device
   that ranks the 20 best), and, when ``../shared/data/nasbench201`` is there, the proxy device (the same
   with the benchmark's measured source latencies) and the proxy devices' ridge (the readout's regression on
   the benchmark's measured source latencies);
5. report: the table, a scatter plot, a calibrated interval per prediction.

Every stage leaves its output in the run folder; a rerun resumes (measurements row by row, fine-tuning
from its checkpoint). ``--from-scratch`` runs the earlier, longer flow instead: collect networks,
train a new RLM on them, evaluate it beside baselines (``quickstart_scratch.py``).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import kendalltau, spearmanr

from coderlm.cli.flags import add_flags, dataclass_options
from coderlm.cli.quickstart_config import QuickstartConfig
from coderlm.cli.quickstart_scratch import run_scratch
from coderlm.cli.train import train_run
from coderlm.collect.nets.collect import collect_nas, read_join_csv, sample_cells
from coderlm.collect.programs.corpora import shared_data
from coderlm.data import Dataset, read_dataset, write_dataset
from coderlm.decoding import central_interval, point_estimate
from coderlm.estimator import RegressionLM
from coderlm.evaluation import evaluate, markdown_table, write_report
from coderlm.evaluation.baselines import make_baseline
from coderlm.readout import fit_readout

OBJECTIVE = "latency_cpu"
FINETUNE_STEPS = 150  # --steps when not given


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "quickstart",
        help="a latency predictor for this CPU from 20 measurements, read out of the shipped model (about a minute)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_flags(p, dataclass_options(QuickstartConfig), "options (all optional)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(QuickstartConfig)}
    config = QuickstartConfig(**{k: v for k, v in given.items() if v is not None})
    (run_scratch if config.from_scratch else run_fewshot)(config)
    return 0


def run_fewshot(config: QuickstartConfig, say=print) -> dict[str, Any]:
    """Every stage of the few-shot flow; returns the comparison, the coverage and stage timings."""
    out, timings = Path(config.out), {}
    shipped = RegressionLM.load(config.model, device=config.device)  # first: a missing model stops before any work
    shipped.num_samples = config.num_samples
    count = config.shots + config.calibration + config.networks
    cells = sample_cells(count, config.seed)
    split = config.calibration > 0  # else: calibrated on the shots, each left out (cross-conformal)

    say(f"[1/5] measure {count} NAS-Bench-201 networks on this CPU (onnxruntime): ONNX text -> {OBJECTIVE} (ms)")
    start = time.perf_counter()
    report = collect_nas(
        out / "data" / "nb201.jsonl",
        None,
        [OBJECTIVE],
        cells=cells,
        cells_per_stage=5,
        latency_threads=config.latency_threads,
    )
    by_cell = {row.group: row for row in read_dataset(report.path)}
    parts = {
        "shots": cells[: config.shots],
        "calibration": cells[config.shots : config.shots + config.calibration],
        "test": cells[config.shots + config.calibration :],
    }
    parts = {name: part for name, part in parts.items() if part}
    files = {
        name: write_dataset(out / "data" / f"{name}.jsonl", Dataset([by_cell[c] for c in part]))
        for name, part in parts.items()
    }
    timings["measure_s"] = time.perf_counter() - start

    say(f"[2/5] read this CPU's latency out of {config.model}'s predicted latencies on its source devices")
    start = time.perf_counter()
    model_dir = out / "model"
    texts = lambda part: [by_cell[c].text for c in parts[part]]  # noqa: E731
    values = lambda part: np.array([by_cell[c].targets[OBJECTIVE] for c in parts[part]])  # noqa: E731
    rlm = copy.copy(shipped)  # the same network; the readout is the copy's alone
    sources = [name for name in rlm.objectives_ if name.startswith("lat_ms_")] or None  # None: every objective
    readout = rlm.fit_readout(
        texts("shots"), values("shots"), OBJECTIVE, inputs=sources, seed=config.seed, calibrate=not split
    )
    heaviest = sorted(zip(readout.inputs, readout.weights, strict=True), key=lambda p: -abs(p[1]))[:3]
    say("      ridge on " + ", ".join(f"{rlm.objectives_[j][7:]} {w:+.2f}" for j, w in heaviest) + ", ...")
    timings["readout_s"] = time.perf_counter() - start
    column = rlm.objectives_.index(OBJECTIVE)

    if split:
        say(f"[3/5] calibrate its intervals on {config.calibration} more (split conformal)")
        known = np.full((config.calibration, len(rlm.objectives_)), np.nan)  # the source devices: not measured here
        known[:, column] = values("calibration")
        rlm.calibrate(texts("calibration"), known, seed=config.seed)
    else:
        say(f"[3/5] calibrate its intervals on the {config.shots}, each read out without it (cross-conformal)")
    calibration = rlm.calibration_
    rlm.save(model_dir)

    say(f"[4/5] predict the other {config.networks} networks; the baselines do too")
    start = time.perf_counter()
    samples = rlm.sample(texts("test"), seed=config.seed)
    predicted = {"rlm (readout)": point_estimate(samples)[:, column]}
    if config.finetune:
        predicted["rlm (fine-tuned)"] = finetuned(config, files["shots"], out / "finetuned", texts("test"), timings)
    predicted |= baselines(config, shipped, parts, by_cell, values("shots"), point_estimate(samples))
    timings["predict_s"] = time.perf_counter() - start

    say("[5/5] compare with what was measured")
    measured = values("test")
    rows = [
        {"method": name, "spearman": spearmanr(p, measured).statistic, "kendall": kendalltau(p, measured).statistic}
        for name, p in predicted.items()
    ]
    level = 0.9 if 0.9 in calibration.promised() else max(calibration.promised(), default=0.5)
    intervals = {
        "raw": central_interval(samples, level)[:, column : column + 1],
        "calibrated": calibration.interval(samples, level)[:, column : column + 1],
    }
    metrics = evaluate(
        predicted["rlm (readout)"][:, None],
        measured[:, None],
        [OBJECTIVE],
        intervals={level: intervals["raw"]},
        calibrated={level: intervals["calibrated"]},
    )
    write_report(
        out / "report",
        metrics,
        predicted["rlm (readout)"][:, None],
        measured[:, None],
        [OBJECTIVE],
        title="coderlm quickstart: this CPU from 20 measurements",
        extra_tables=[("Spearman by method", rows)],
    )
    say(markdown_table(rows, floatfmt=".3f"))
    entry = metrics["all"][OBJECTIVE]
    key = f"coverage_{level * 100:g}"
    say(
        f"{level:.0%} intervals cover {entry[key + '_calibrated']:.0%} of the {config.networks} networks "
        f"(uncalibrated {entry[key]:.0%}); e.g. (ms):"
    )
    for i in range(min(5, len(measured))):
        low, high = intervals["calibrated"][i, 0]
        say(
            f"  {parts['test'][i]}: predicted {predicted['rlm (readout)'][i]:.3f} [{low:.3f}, {high:.3f}], "
            f"measured {measured[i]:.3f}"
        )
    say(f"report: {out / 'report' / 'report.md'}; model: {model_dir} (coderlm predict --model {model_dir} net.onnx)")
    readout_rho = rows[0]["spearman"]
    zero_shot = next((r for r in rows if r["method"].startswith("zero-shot")), None)
    if zero_shot is not None and zero_shot["spearman"] > readout_rho:
        say(
            f"the nearest source device ranked these networks better than the readout ({zero_shot['spearman']:.3f} "
            f"vs {readout_rho:.3f}); as a model: coderlm readout --model {config.model} --data {files['shots']} "
            f"--out {out / 'model_nearest'} --inputs 'lat_ms_*' --nearest --calibrate"
        )
    summary = {
        "timings": {k: round(v, 1) for k, v in timings.items()},
        "methods": rows,
        "level": level,
        "coverage": entry[key],
        "coverage_calibrated": entry[key + "_calibrated"],
    }
    (out / "quickstart.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def finetuned(config: QuickstartConfig, shots: Path, run: Path, test: list[str], timings: dict) -> np.ndarray:
    """``--finetune``: the shipped model fine-tuned on the shots (its objectives as context, this CPU's latency
    starting from the nearest source device); its medians for the test networks."""
    start = time.perf_counter()
    steps = config.steps or FINETUNE_STEPS
    training = {
        "steps": steps,
        "batch_size": min(config.shots, 32),
        "learning_rate": config.learning_rate,
        "seed": config.seed,
        "checkpoint_every": steps,
    }
    rlm = train_run(
        shots,
        run,
        objectives=[OBJECTIVE],
        training=training,
        init=config.model,
        context="init",
        estimator={"num_samples": config.num_samples, "device": config.device},
        resume=(run / "checkpoints").exists(),
    )
    timings["finetune_s"] = time.perf_counter() - start
    return point_estimate(rlm.sample(test, seed=config.seed))[:, rlm.objectives_.index(OBJECTIVE)]


def baselines(
    config, shipped: RegressionLM, parts: dict, by_cell: dict, shot_values: np.ndarray, guess_test: np.ndarray
) -> dict:
    """Predictions for the test networks of GBDT on the shots, the shipped model zero-shot and the proxy device.
    ``guess_test``: the shipped model's medians for the test networks (its objectives first)."""
    shots, test = parts["shots"], parts["test"]
    out = {}
    leaves = max(1, min(20, len(shots) // 5))  # leaves that a few rows can fill
    gbdt = make_baseline("gbdt", min_samples_leaf=leaves).fit([by_cell[c].text for c in shots], shot_values)
    out["gbdt (same shots)"] = gbdt.predict([by_cell[c].text for c in test])[:, 0]
    sources = [j for j, name in enumerate(shipped.objectives_) if name.startswith("lat_ms_")]
    if sources:  # a model that predicts latencies on other devices: the one that ranks the shots best
        guess = point_estimate(shipped.sample([by_cell[c].text for c in shots], seed=config.seed))
        best = max(sources, key=lambda j: spearmanr(guess[:, j], shot_values).statistic)
        out[f"zero-shot ({shipped.objectives_[best][7:]})"] = guess_test[:, best]
    table = shared_data() / "nasbench201" / "nasbench201.csv"
    if table.is_file():  # NAS-Bench-201's own measurements of these networks on the source devices
        known = read_join_csv(table)
        columns = next(iter(known.values())).keys()
        names = [shipped.objectives_[j] for j in sources if shipped.objectives_[j] in columns]
        if names and all(c in known for c in shots + test):
            best = max(names, key=lambda n: spearmanr([known[c][n] for c in shots], shot_values).statistic)
            out[f"proxy device ({best[7:]})"] = np.array([known[c][best] for c in test])
            measured = lambda cells: np.array([[known[c][n] for n in names] for c in cells])  # noqa: E731
            ridge = fit_readout(OBJECTIVE, measured(shots), shot_values, range(len(names)))
            out["proxy devices (ridge)"] = ridge.apply(measured(test))
    return out
