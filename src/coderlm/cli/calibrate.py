"""``coderlm calibrate``: split-conformal calibration of a trained model's intervals on held-out rows.

Samples each row of ``--data`` (rows the model has not trained on), scores how far outside its
intervals the measured value falls, and keeps the scores with the model (``calibration.json`` in its
folder): from then on its intervals (``coderlm predict``, ``predict_interval``, ``coderlm evaluate``)
are widened to cover what their level promises. Prints which levels the set can promise: too few rows
cannot promise a high level (90% needs 9). An objective ``--data`` has no value for keeps the scores it
had (a readout calibrated by ``coderlm readout --calibrate``, say).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from coderlm.data import read_dataset
from coderlm.estimator import RegressionLM
from coderlm.model.files import CALIBRATION_FILE, write_calibration


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "calibrate",
        help="conformal calibration of a model's intervals on held-out rows (kept with the model)",
        description=__doc__.split("\n\n", 1)[1],
    )
    p.add_argument("--model", required=True, help="run folder or saved model (calibration.json is written there)")
    p.add_argument("--data", required=True, help="held-out dataset with the model's objectives (.jsonl or .parquet)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    rlm = RegressionLM.load(args.model)
    arrays = read_dataset(args.data).to_arrays(rlm.objectives_, "mask", absent="nan")
    calibration = rlm.calibrate(arrays.texts, arrays.targets, seed=args.seed)
    write_calibration(Path(args.model), calibration.to_dict())
    promised = calibration.promised()
    summary = {"calibration": str(Path(args.model) / CALIBRATION_FILE), "rows": calibration.size, "promised": promised}
    missing = sorted(set(calibration.scores) - set(promised))
    if missing:
        summary["warning"] = f"{calibration.size} rows cannot promise {', '.join(f'{x:.0%}' for x in missing)}"
    print(json.dumps(summary))
    return 0
