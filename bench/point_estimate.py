"""Which point estimate of the samples ranks best, and does sampling noise limit it?

The RLM's prediction is the median of its samples. If the ranking were limited by the noise of a
64-sample median, more samples (or a lower temperature) would rank better. This bench takes a trained
model (default: the shipped ``builtin:nb201``) and its test networks (the last 1,000 of
``bench/nasbench201.py``'s permutation; ``--test`` of them) and reports Spearman of the median and of
the mean for 16, 64 and 256 samples at temperature 1 (nested: the first k of the same 256), and of 64
samples at temperatures 0.5 and ~0 (greedy), and of the exact median (``point="exact"``: the model's own
median, walked without samples, ``coderlm.decoding.walk``), for a few objectives.

    python bench/point_estimate.py --json out/point_estimate.json

Its data, the test networks' ONNX text (a minute):

    python bench/point_estimate.py --write-cells out/nb201_test_cells.txt
    coderlm collect nas --cells out/nb201_test_cells.txt --labels flops --cells-per-stage 5 --out out/nb201_all
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from coderlm import RegressionLM
from coderlm.atomic import write_atomic
from coderlm.collect.programs.corpora import shared_data
from coderlm.data import read_dataset
from coderlm.evaluation import markdown_table

OBJECTIVES = "c10_test_acc_200ep,lat_ms_pixel3,lat_ms_1080ti_1,lat_ms_gold_6240"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="builtin:nb201")
    parser.add_argument(
        "--data", type=Path, default=Path("out/nb201_all/nb201.jsonl"), help="ONNX text of all networks"
    )
    parser.add_argument("--csv", type=Path, default=shared_data() / "nasbench201" / "nasbench201.csv")
    parser.add_argument("--objectives", default=OBJECTIVES)
    parser.add_argument("--test", type=int, default=300, help="test networks (the first of the 1,000)")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--write-cells", type=Path, help="write the 1,000 test cells here (for coderlm collect nas --cells) and stop"
    )
    args = parser.parse_args()
    with open(args.csv, newline="") as f:
        table = {row["arch"]: row for row in csv.DictReader(f)}
    order = np.random.default_rng(0).permutation(len(table))
    cells = list(table)
    test = [cells[i] for i in order[-1000:]]
    if args.write_cells:
        write_atomic(args.write_cells, "\n".join(test) + "\n")
        return
    if not args.data.is_file():
        raise SystemExit(
            f"{args.data}: not found; the test networks' ONNX text in a minute: python bench/point_estimate.py "
            "--write-cells out/nb201_test_cells.txt && coderlm collect nas --cells out/nb201_test_cells.txt "
            f"--labels flops --cells-per-stage 5 --out {args.data} (or every network: scripts/train_builtin_nb201.py)"
        )
    test = test[: args.test]
    rows = {r.group: r for r in read_dataset(args.data)}
    model = RegressionLM.load(args.model)
    model.batch_size = 128
    texts = [rows[c].text for c in test]
    objectives = args.objectives.split(",")
    truth = {o: np.array([float(table[c][o]) for c in test]) for o in objectives}
    runs = {(1.0, k): None for k in (16, 64, 256)}
    big = model.sample(texts, num_samples=256, seed=0)
    for k in (16, 64, 256):
        runs[(1.0, k)] = big[:, :k]
    for temperature in (0.5, 1e-4):
        runs[(temperature, 64)] = model.sample(texts, num_samples=64, seed=0, temperature=temperature)
    results = []
    for (temperature, k), samples in runs.items():
        for point, reduce in (("median", np.median), ("mean", np.mean)):
            record = {"method": "rlm", "point": point, "samples": k, "temperature": temperature}
            for o in objectives:
                column = samples[:, :, model.objectives_.index(o)]
                results.append(
                    {**record, "objective": o, "spearman": float(spearmanr(reduce(column, 1), truth[o]).statistic)}
                )
    exact = model.predict(texts, point="exact")  # the walk: no samples (coderlm.decoding.walk)
    for o in objectives:
        rho = float(spearmanr(exact[:, model.objectives_.index(o)], truth[o]).statistic)
        results.append(
            {"method": "rlm", "point": "exact", "samples": 0, "temperature": 1.0, "objective": o, "spearman": rho}
        )
    runs[(1.0, 0)] = None
    table_rows = []
    for temperature, k in runs:
        for point in ("median", "mean") if k else ("exact",):
            picked = [r for r in results if (r["temperature"], r["samples"], r["point"]) == (temperature, k, point)]
            table_rows.append(
                {
                    "point": point,
                    "samples": k,
                    "temperature": temperature,
                    **{r["objective"]: r["spearman"] for r in picked},
                }
            )
    print(markdown_table(table_rows, floatfmt=".3f"))
    if args.json:
        write_atomic(args.json, json.dumps({"results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
