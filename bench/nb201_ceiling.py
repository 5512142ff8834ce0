"""NAS-Bench-201: how high can any predictor rank the bench's 1,000 test networks?

A cell string fixes the whole network, so a one-hot code of its six edges (6 x 5 operations)
is a complete description of the input. Tabular models on that code, trained on more and more
of the other 14,625 networks, trace a learning curve for the same 1,000 test networks as
``bench/nasbench201.py`` (same permutation, same test rows; the first 1,800 training rows are
that bench's training set). Where the curve flattens below a target even with 8x the data, the
remaining error is in the labels (measurement noise), not in the text or the model.

Models: gradient-boosted trees on the one-hot code, and ridge regression on the one-hot code
plus all pairwise products (an edge's operation interacting with another's). Latencies are
fitted in log space, accuracy as is; Spearman does not depend on the transform.

    python bench/nb201_ceiling.py --json out/nb201_ceiling.json      # ~25 s on 2 cores
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import Ridge

from coderlm.evaluation import markdown_table
from nasbench201 import DATA, OBJECTIVES, PAPER, SHORT, load, split

OPERATIONS = ["none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3"]


def one_hot(cell: str) -> np.ndarray:
    """``|op~0|+|op~0|op~1|+|op~0|op~1|op~2|`` -> 30 zeros and six ones, edge by edge."""
    edges = [token.split("~")[0] for node in cell.strip("|").split("|+|") for token in node.split("|")]
    if len(edges) != 6 or not set(edges) <= set(OPERATIONS):
        raise ValueError(f"not a NAS-Bench-201 cell string: {cell!r}")
    code = np.zeros(len(edges) * len(OPERATIONS))
    for i, op in enumerate(edges):
        code[i * len(OPERATIONS) + OPERATIONS.index(op)] = 1.0
    return code


def with_pairs(x: np.ndarray) -> np.ndarray:
    """The one-hot code and every product of two of its columns."""
    i, j = np.triu_indices(x.shape[1], k=1)
    return np.hstack([x, x[:, i] * x[:, j]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="nasbench201.csv")
    parser.add_argument("--train-sizes", default="1800,2000,5000,14625", help="comma-separated, at most 14625")
    parser.add_argument("--json", type=Path, help="write {'results': [...]} here")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"{args.data}: not found (pass --data path/to/nasbench201.csv)")
    cells, targets = load(args.data)
    x = np.stack([one_hot(cell) for cell in cells])
    fitted = np.where([name.startswith("lat_") for name in OBJECTIVES], np.log(np.maximum(targets, 1e-9)), targets)
    parts = split(len(cells), train=len(cells) - 1000, val=0)  # bench/nasbench201.py's permutation and test rows
    test, pool = parts["test"], parts["train"]
    sizes = [int(s) for s in args.train_sizes.split(",")]
    if max(sizes) > len(pool):
        raise SystemExit(f"--train-sizes: at most {len(pool)} networks are outside the test set")

    models = {
        "gbdt": (lambda: HistGradientBoostingRegressor(max_iter=500, learning_rate=0.05, random_state=0), x),
        "ridge_pairs": (lambda: Ridge(alpha=1.0), with_pairs(x)),
    }
    results = []
    for size in sizes:
        train = pool[:size]
        for method, (make, features) in models.items():
            start = time.perf_counter()
            record = {"method": method, "train_networks": size}
            for j, name in enumerate(OBJECTIVES):
                predicted = make().fit(features[train], fitted[train, j]).predict(features[test])
                record[f"{name}_spearman"] = float(spearmanr(predicted, targets[test, j]).statistic)
            results.append(record | {"fit_s": time.perf_counter() - start})
    results.append({"method": "paper", **{f"{k}_spearman": v for k, v in PAPER.items()}})

    table = [
        {
            "method": r["method"],
            "train networks": r.get("train_networks"),
            **{f"{SHORT[o]} ρ": r.get(f"{o}_spearman") for o in OBJECTIVES},
        }
        for r in results
    ]
    print(f"NAS-Bench-201, one-hot cell code, the same {len(test)} test networks as bench/nasbench201.py")
    print(markdown_table(table, floatfmt=".3f"))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
