"""NAS-Bench-201: one multi-objective RLM vs baselines, same split, same run.

Text = the architecture's cell string. Objectives, generated in this order as in the
paper: CIFAR-10 test accuracy, then latency on Pixel3, Eyeriss, an Intel CPU (Gold
6240) and an Nvidia GPU (Titan RTX, batch 1). Split: a permutation from
numpy.random.default_rng(0); the first 2000 rows train (the last 200 of them
validate), the last 1000 rows test. Paper (ONNX text input) Spearman on the four
devices: 0.731, 0.466, 0.960, 0.939.

    python bench/nasbench201.py --data ../shared/data/nasbench201/nasbench201.csv --json out/nb201.json
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np
import torch
from scipy.stats import kendalltau, spearmanr

from coderlm import RegressionLM
from coderlm.decoding import point_estimate
from coderlm.evaluation import markdown_table

OBJECTIVES = ["c10_test_acc_200ep", "lat_ms_pixel3", "lat_ms_eyeriss", "lat_ms_gold_6240", "lat_ms_titan_rtx_1"]
PAPER = {"lat_ms_pixel3": 0.731, "lat_ms_eyeriss": 0.466, "lat_ms_gold_6240": 0.960, "lat_ms_titan_rtx_1": 0.939}
BASELINES = ["regression_head_norm", "regression_head_raw", "gbdt", "knn", "length"]
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "nasbench201" / "nasbench201.csv"


def load(path: Path) -> tuple[list[str], np.ndarray]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    texts = [row["arch"] for row in rows]
    targets = np.array([[float(row[name]) for name in OBJECTIVES] for row in rows])
    return texts, targets


def split(n: int, train: int = 2000, test: int = 1000, val: int = 200) -> dict[str, np.ndarray]:
    order = np.random.default_rng(0).permutation(n)
    return {"train": order[: train - val], "val": order[train - val : train], "test": order[-test:]}


def scores(predicted: np.ndarray, measured: np.ndarray) -> dict[str, float]:
    out = {}
    for j, name in enumerate(OBJECTIVES):
        out[f"{name}_spearman"] = float(spearmanr(predicted[:, j], measured[:, j]).statistic)
        out[f"{name}_kendall"] = float(kendalltau(predicted[:, j], measured[:, j]).statistic)
    return out


def timed(fit, predict) -> tuple[np.ndarray, float, float]:
    start = time.perf_counter()
    fit()
    trained = time.perf_counter() - start
    start = time.perf_counter()
    predicted = predict()
    return predicted, trained, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="nasbench201.csv")
    parser.add_argument("--input", choices=["arch"], default="arch", help="what the model reads")
    parser.add_argument("--steps", type=int, default=3000, help="RLM training steps")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--encoder-dim", type=int, default=128)
    parser.add_argument("--encoder-layers", type=int, default=2)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--samples", type=int, default=64, help="samples per test input")
    parser.add_argument("--baselines", default=",".join(BASELINES), help="comma-separated, or '' for none")
    parser.add_argument("--head-steps", type=int, default=3000, help="training steps of the regression heads")
    parser.add_argument("--json", type=Path, help="write {'results': [...]} here")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"{args.data}: not found (pass --data path/to/nasbench201.csv)")

    texts, targets = load(args.data)
    parts = split(len(texts))
    tr, va, te = (parts[k] for k in ("train", "val", "test"))
    pick = lambda idx: [texts[i] for i in idx]  # noqa: E731
    model = {"encoder_dim": args.encoder_dim, "decoder_dim": args.encoder_dim, "encoder_layers": args.encoder_layers,
             "dropout": args.dropout}  # fmt: skip
    training = {"steps": args.steps, "batch_size": args.batch_size, "learning_rate": args.learning_rate,
                "weight_decay": args.weight_decay, "eval_every": max(args.steps // 10, 1)}  # fmt: skip
    rows = []

    rlm = RegressionLM(vocab_size=512, max_input_len=64, model=model, training=training, num_samples=args.samples,
                       batch_size=64)  # fmt: skip
    samples, train_s, predict_s = timed(
        lambda: rlm.fit(pick(tr), targets[tr], objectives=OBJECTIVES, val_texts=pick(va), val_targets=targets[va]),
        lambda: rlm.sample(pick(te), num_samples=args.samples, seed=0),
    )  # fmt: skip
    for point in ("median", "mean"):  # the same samples, two point estimates
        rows.append({"method": "rlm", "point": point, "input": args.input,
                     **scores(point_estimate(samples, point), targets[te]), "train_s": train_s,
                     "queries_per_s": len(te) / predict_s})  # fmt: skip

    from coderlm.evaluation.baselines import make_baseline

    seen = np.concatenate([tr, va])  # baselines have no early stopping: they train on train + val

    for name in [b for b in args.baselines.split(",") if b]:
        options = {}
        if name.startswith("regression_head"):
            options = {"model": model, "training": {**training, "steps": args.head_steps}, "vocab_size": 512,
                       "max_input_len": 64}  # fmt: skip
        baseline = make_baseline(name, **options)
        predicted, train_s, predict_s = timed(lambda b=baseline: b.fit(pick(seen), targets[seen]),
                                              lambda b=baseline: b.predict(pick(te)))  # fmt: skip
        rows.append({"method": name, "input": args.input, **scores(predicted, targets[te]), "train_s": train_s,
                     "queries_per_s": len(te) / predict_s})  # fmt: skip

    rows.append({"method": "paper (ONNX text)", "input": "onnx", **{f"{k}_spearman": v for k, v in PAPER.items()}})
    short = {"c10_test_acc_200ep": "acc", "lat_ms_pixel3": "pixel3", "lat_ms_eyeriss": "eyeriss",
             "lat_ms_gold_6240": "cpu", "lat_ms_titan_rtx_1": "gpu"}  # fmt: skip
    table = [{"method": r["method"] + (f" ({r['point']})" if "point" in r else ""),
              **{f"{short[o]} ρ": r.get(f"{o}_spearman") for o in OBJECTIVES},
              **{f"{short[o]} τ": r.get(f"{o}_kendall") for o in OBJECTIVES},
              "train s": r.get("train_s"), "q/s": r.get("queries_per_s")} for r in rows]  # fmt: skip
    print(f"NAS-Bench-201, input={args.input}, train {len(tr)} + val {len(va)}, test {len(te)}, "
          f"torch threads {torch.get_num_threads()}")  # fmt: skip
    print(markdown_table(table, floatfmt=".3f"))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        results = [{k: v for k, v in r.items() if v is not None} for r in rows]
        args.json.write_text(json.dumps({"results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
