"""``coderlm readout``: a new objective from a few measurements, read out of a trained model's predictions.

For each objective of ``--data`` the model does not decode (a new device's latency), fits a ridge
regression on the model's own predicted objectives (``--inputs``, default all; shell-style patterns
such as ``lat_ms_*``) over the measured rows (``coderlm.readout``), and saves the model with these
readouts into ``--out``: no training, a second or so per objective. Every command that takes
``--model`` then predicts the new objectives too, with samples and intervals like the others
(``--calibrate`` calibrates them on the same rows, each left out of the readout it is scored by: no
more measurements; or ``coderlm calibrate --model OUT --data more.jsonl`` on rows it never saw).
``--nearest`` reads out of the single input that ranks the measured rows best instead: the zero-shot
choice, as a model in your units.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
from pathlib import Path

from coderlm.cli.flags import csv_list
from coderlm.data import DatasetError, read_dataset
from coderlm.estimator import RegressionLM


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "readout",
        help="a new objective (a new device) from a few measured rows: ridge over a model's own predictions",
        description=__doc__.split("\n\n", 1)[1],
    )
    p.add_argument("--model", required=True, help="trained model, run folder or builtin:<name>")
    p.add_argument("--data", required=True, help="measured rows (.jsonl or .parquet) with the new objective(s)")
    p.add_argument("--out", required=True, help="folder for the model with its readouts")
    p.add_argument("--objectives", type=csv_list, help="new objectives to read out (default: all the model lacks)")
    p.add_argument("--inputs", type=csv_list, help="model objectives to read from, names or patterns (default: all)")
    p.add_argument(
        "--nearest",
        action="store_true",
        help="read out of the one input that ranks the rows best (the zero-shot choice) instead of all of them",
    )
    p.add_argument(
        "--calibrate",
        action="store_true",
        help="calibrate each readout's intervals on the same rows, leave-one-out (9 rows promise 90%%)",
    )
    p.add_argument("--seed", type=int, default=0, help="sampling seed for the model's predictions (default 0)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    rlm = RegressionLM.load(args.model)
    dataset = read_dataset(args.data)
    decoded = rlm.decoded_objectives_
    wanted = args.objectives or [name for name in dataset.target_names() if name not in decoded]
    if not wanted:
        raise DatasetError(args.data, f"has no objective the model lacks (it writes {decoded}); nothing to read out")
    inputs = decoded
    if args.inputs:
        inputs = [name for name in decoded if any(fnmatch.fnmatchcase(name, p) for p in args.inputs)]
        if not inputs:
            raise ValueError(f"--inputs {','.join(args.inputs)} matches none of the model's objectives {decoded}")
    summary = {"model": str(args.out), "candidates": inputs, "readouts": {}}
    for name in wanted:
        arrays = dataset.to_arrays([name], "skip")
        readout = rlm.fit_readout(
            arrays.texts,
            arrays.targets[:, 0],
            name,
            inputs=inputs,
            seed=args.seed,
            nearest=args.nearest,
            calibrate=args.calibrate,
        )
        used = [decoded[j] for j in readout.inputs]
        top = sorted(zip(used, readout.weights, strict=True), key=lambda p: -abs(p[1]))[:3]
        summary["readouts"][name] = {
            "inputs": used,
            "rows": readout.rows,
            "skipped": arrays.skipped,
            "log": readout.log,
            "alpha": readout.alpha,
            "largest_weights": {n: round(float(w), 4) for n, w in top},
        }
    if getattr(rlm, "calibration_", None) is not None:
        summary["calibration"] = {"kind": rlm.calibration_.kind, "promised": rlm.calibration_.promised()}
    rlm.save(Path(args.out))
    print(json.dumps(summary))
    return 0
