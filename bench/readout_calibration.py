"""Intervals that keep their promise from few measurements: a readout's calibration, split vs cross-conformal.

``coderlm quickstart`` reads this CPU's latency out of ``builtin:nb201`` from 20 measured networks and
calibrated its intervals on 10 more (split conformal): the 90% correction is then the largest of ten
scores, and one run's coverage moved over 70-96%. The alternative: calibrate on the rows that fit the
readout, each scored by the readout fitted without it (cross-conformal, ``coderlm.readout``). For
HELP's six unseen devices (NAS-Bench-201's measured latencies) and, with ``--cpu``, this CPU (a
quickstart run's measured networks), ``--draws`` random draws of the measured networks from a pool;
per draw and method, the coverage of the calibrated intervals on every other network of the pool:

- ``raw``: the readout fitted on 20, the samples' own central interval (20 measured);
- ``split (10 more)``: fitted on 20, split conformal on 10 more (the quickstart until now; 30 measured);
- ``split (100 more)``: the same on 100 more (120 measured; a reference);
- ``cross (the 20)``: fitted on 20 and calibrated on the same 20, each left out (20 measured);
- ``cross (all 30)``: fitted on 30 and calibrated on them, each left out (30 measured).

Rows per method and device (``task``; ``mean`` over devices): the mean coverage over draws, its standard
deviation, its 5th percentile, the share of draws under ``level - 0.1``, the median width of the interval
(upper / lower bound) and the readout's Spearman on the test networks. The pool is the 1,000 test networks
of ``bench/fewshot.py`` (never in the shipped model's training), their ONNX text collected on first use.

    python bench/readout_calibration.py --json out/readout_calibration.json
    python bench/readout_calibration.py --cpu runs/quickstart/data/nb201.jsonl --devices '' ...   # this CPU
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from coderlm import RegressionLM
from coderlm.atomic import write_atomic
from coderlm.collect.nets.collect import collect_nas
from coderlm.collect.programs.corpora import shared_data
from coderlm.data import read_dataset
from coderlm.decoding import central_interval, point_estimate
from coderlm.decoding.calibration import calibrate
from coderlm.evaluation import markdown_table
from coderlm.readout import cross_calibration, fit_readout

DEVICES = ["titan_rtx_256", "gold_6226", "fpga", "pixel2", "raspi4", "eyeriss"]  # HELP's targets, as bench/fewshot.py
METHODS = ["raw", "split (10 more)", "split (100 more)", "cross (the 20)", "cross (all 30)"]
MEASURED = {"raw": 20, "split (10 more)": 30, "split (100 more)": 120, "cross (the 20)": 20, "cross (all 30)": 30}


def covered(samples: np.ndarray, truth: np.ndarray, level: float, calibration=None) -> tuple[float, float]:
    """Coverage of ``truth`` (n,) by the intervals of read-out ``samples`` (n, S), and their median width."""
    samples = samples[..., None]
    bounds = (calibration.interval(samples, level) if calibration else central_interval(samples, level))[:, 0]
    inside = (bounds[:, 0] <= truth) & (truth <= bounds[:, 1])
    return float(inside.mean()), float(np.median(bounds[:, 1] / bounds[:, 0]))


def one_draw(samples: np.ndarray, truth: np.ndarray, columns: list[int], level: float, seed: int) -> dict:
    """Every method's (coverage, width, spearman) on one draw of the measured networks."""
    order = np.random.default_rng(seed).permutation(len(truth))
    shots, more, test = order[:20], order[20:120], order[120:]
    predicted = point_estimate(samples)
    readouts = {}  # per fitted set (the 20, or the 30): the readout and its test networks read out
    for fitted in (shots, order[:30]):
        readout = fit_readout("new", predicted[fitted], truth[fitted], columns)
        readouts[len(fitted)] = (fitted, readout, readout.apply(samples[test]))
    out = {}
    for method in METHODS:
        fitted, readout, read = readouts[30 if method == "cross (all 30)" else 20]
        calibration = None
        if method.startswith("split"):
            extra = more[:10] if "10 more" in method else more
            calibration = calibrate(readout.apply(samples[extra])[..., None], truth[extra, None])
        elif method.startswith("cross"):
            calibration = cross_calibration(samples[fitted], truth[fitted], columns, "new", False)
        coverage, width = covered(read, truth[test], level, calibration)
        out[method] = (coverage, width, spearmanr(point_estimate(read[..., None])[:, 0], truth[test]).statistic)
    return out


def summarize(task: str, draws: list[dict], level: float) -> list[dict]:
    rows = []
    for method in METHODS:
        coverage, width, rho = (np.array([d[method][i] for d in draws]) for i in range(3))
        rows.append(
            {
                "method": "rlm",
                "calibration": method,
                "task": task,
                "measured": MEASURED[method],
                "level": level,
                "coverage": float(coverage.mean()),
                "coverage_std": float(coverage.std()),
                "coverage_p05": float(np.percentile(coverage, 5)),
                "under": float((coverage < level - 0.1).mean()),
                "width": float(np.median(width)),
                "spearman": float(rho.mean()),
                "draws": len(draws),
            }
        )
    return rows


def pool_cells(table: dict) -> list[str]:
    """``bench/fewshot.py``'s 1,000 test networks (the shipped model never trained on them)."""
    order = np.random.default_rng(0).permutation(len(table))
    cells = list(table)
    return [cells[i] for i in order[-1000:]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="builtin:nb201")
    parser.add_argument("--csv", type=Path, default=shared_data() / "nasbench201" / "nasbench201.csv")
    parser.add_argument("--data", type=Path, default=Path("out/nb201_pool/nb201.jsonl"), help="pool's ONNX text")
    parser.add_argument("--devices", default=",".join(DEVICES), help="HELP's devices to read out ('' for none)")
    parser.add_argument("--cpu", type=Path, help="a quickstart run's data/nb201.jsonl: this CPU as a task too")
    parser.add_argument("--draws", type=int, default=200, help="random draws of the measured networks per task")
    parser.add_argument("--level", type=float, default=0.9)
    parser.add_argument("--samples", type=int, default=64, help="samples per network (the quickstart's 64)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    shipped = RegressionLM.load(args.model)
    columns = [j for j, name in enumerate(shipped.objectives_) if name.startswith("lat_ms_")]
    tasks: dict[str, tuple[list[str], np.ndarray]] = {}
    devices = [d for d in args.devices.split(",") if d]
    if devices:
        if not args.csv.is_file():
            raise SystemExit(f"{args.csv}: not found (NAS-Bench-201's table, ../shared/data/nasbench201)")
        with open(args.csv, newline="") as f:
            table = {row["arch"]: row for row in csv.DictReader(f)}
        cells = pool_cells(table)
        collect_nas(args.data, None, ["flops", "params"], cells=cells, cells_per_stage=5)  # resumes; 1 min at first
        text = {row.group: row.text for row in read_dataset(args.data)}
        for device in devices:
            tasks[device] = ([text[c] for c in cells], np.array([float(table[c][f"lat_ms_{device}"]) for c in cells]))
    if args.cpu:
        rows = [r for r in read_dataset(args.cpu) if "latency_cpu" in r.targets]
        tasks["cpu (this machine)"] = ([r.text for r in rows], np.array([r.targets["latency_cpu"] for r in rows]))
    sampled: dict[tuple, np.ndarray] = {}  # the devices share one pool: sampled once
    results = []
    for task, (texts, truth) in tasks.items():
        if tuple(texts) not in sampled:
            start = time.perf_counter()
            sampled[tuple(texts)] = shipped.sample(texts, num_samples=args.samples, seed=0, progress=True)
            print(f"{args.model} sampled {len(texts)} networks: {time.perf_counter() - start:.0f} s")
        samples = sampled[tuple(texts)][..., : len(shipped.decoded_objectives_)]
        draws = [one_draw(samples, truth, columns, args.level, seed) for seed in range(args.draws)]
        results += summarize(task, draws, args.level)
        print(f"{task}: {args.draws} draws")
    if len(tasks) > 1:
        for method in METHODS:
            mine = [r for r in results if r["calibration"] == method]
            mean = {k: float(np.mean([r[k] for r in mine])) for k in mine[0] if isinstance(mine[0][k], float)}
            results.append(mine[0] | mean | {"task": "mean"})
    columns_shown = ["calibration", "task", "measured", "coverage", "coverage_std", "coverage_p05", "under", "width"]
    print(markdown_table([{k: r[k] for k in [*columns_shown, "spearman"]} for r in results], floatfmt=".3f"))
    if args.json:
        write_atomic(args.json, json.dumps({"results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
