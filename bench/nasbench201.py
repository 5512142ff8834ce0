"""NAS-Bench-201: one multi-objective RLM vs baselines, same split, same run, two kinds of input.

Objectives, generated in this order as in the paper: CIFAR-10 test accuracy, then latency
on Pixel3, Eyeriss, an Intel CPU (Gold 6240) and an Nvidia GPU (Titan RTX, batch 1).
Split: a permutation from numpy.random.default_rng(0); the first 2000 rows train (the last
200 of them validate), the last 1000 rows test. Inputs:

* ``arch``: the cell string (``|nor_conv_3x3~0|+|...|``);
* ``onnx``: the whole network (5 cells per stage) exported to ONNX and written as text
  (docs/onnx_text.md), read with a line-level BPE (4096) and cut at 256 tokens: every cell of
  a network is the same cell, and 256 tokens hold the stem and the first cell always, the whole
  first stage for 96% of networks (a whole network: median ~500 tokens, 3x the compute per
  step). Truncation is reported.

With ``onnx`` the bench also fine-tunes: an RLM pretrained on the FLOPs of the training
architectures, then trained on accuracy, beside the same model trained on accuracy alone
(paper: about 0.83 -> 0.85). Paper (ONNX text) Spearman on the four devices: 0.731, 0.466,
0.960, 0.939.

The ONNX texts come from a dataset collected once (resumable, 72 min on 2 cores):

    python bench/nasbench201.py --collect-only --workers 2   # collect what is missing (resumable)
    python bench/nasbench201.py --inputs arch,onnx --json out/nb201.json
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
from coderlm.evaluation.baselines import baseline_names, make_baseline

OBJECTIVES = ["c10_test_acc_200ep", "lat_ms_pixel3", "lat_ms_eyeriss", "lat_ms_gold_6240", "lat_ms_titan_rtx_1"]
SHORT = {
    "c10_test_acc_200ep": "acc",
    "lat_ms_pixel3": "pixel3",
    "lat_ms_eyeriss": "eyeriss",
    "lat_ms_gold_6240": "cpu",
    "lat_ms_titan_rtx_1": "gpu",
}
PAPER = {"lat_ms_pixel3": 0.731, "lat_ms_eyeriss": 0.466, "lat_ms_gold_6240": 0.960, "lat_ms_titan_rtx_1": 0.939}
BASELINES = ["regression_head_norm", "regression_head_raw", "gbdt", "knn", "length"]
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "nasbench201" / "nasbench201.csv"
ONNX_DATA = Path("out/nb201_onnx/nb201.jsonl")


def load(path: Path) -> tuple[list[str], np.ndarray]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    cells = [row["arch"] for row in rows]
    targets = np.array([[float(row[name]) for name in OBJECTIVES] for row in rows])
    return cells, targets


def split(n: int, train: int = 2000, test: int = 1000, val: int = 200) -> dict[str, np.ndarray]:
    order = np.random.default_rng(0).permutation(n)
    return {"train": order[: train - val], "val": order[train - val : train], "test": order[-test:]}


def onnx_texts(args: argparse.Namespace, cells: list[str], used: np.ndarray) -> tuple[dict[str, str], dict, float]:
    """ONNX text and FLOPs by cell for the cells in ``used``, collecting the missing ones with --collect."""
    from coderlm.collect.nets.collect import collect_nas, done_cells
    from coderlm.collect.nets.nb201 import BUILDER
    from coderlm.data import read_dataset

    wanted = [cells[i] for i in used]
    collect_s = 0.0
    if args.collect:
        start = time.perf_counter()
        collect_nas(
            args.onnx_data, labels=["flops", "macs", "params"], cells=wanted, workers=args.workers, join_csv=args.data
        )
        collect_s = time.perf_counter() - start
    try:
        done_cells(args.onnx_data, {"builder": BUILDER})  # texts of one builder revision only
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    rows = {r.meta["cell"]: r for r in read_dataset(args.onnx_data)} if args.onnx_data.is_file() else {}
    missing = [c for c in wanted if c not in rows]
    if missing and not args.partial:
        raise SystemExit(
            f"{args.onnx_data}: {len(missing)} of {len(wanted)} split architectures not collected; "
            "pass --collect (resumable) or --partial (only what is there; not comparable)"
        )
    return {c: r.text for c, r in rows.items()}, {c: r.targets["flops"] for c, r in rows.items()}, collect_s


def scores(predicted: np.ndarray, measured: np.ndarray, objectives: list[str]) -> dict[str, float]:
    out = {}
    for j, name in enumerate(objectives):
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


def text_options(args: argparse.Namespace, kind: str) -> dict:
    """How each input kind is read: short cell strings with code BPE, ONNX text with line BPE."""
    if kind == "arch":
        return {"vocab_size": 512, "max_input_len": 64}
    return {"vocab_size": args.onnx_vocab, "pretokenize": "lines", "max_input_len": args.onnx_max_len}


def truncation(rlm: RegressionLM, texts: list[str]) -> dict[str, float]:
    """Tokens kept / total per example, with the model's own tokenizer and context."""
    lengths = rlm.tokenizer_.encode(texts, 10**9).lengths.astype(np.float64)
    kept = np.minimum(lengths, rlm.max_input_len)
    return {
        "tokens_median": float(np.median(lengths)),
        "tokens_max": float(lengths.max()),
        "kept_fraction_mean": float(np.mean(kept / lengths)),
        "truncated_examples": int((lengths > kept).sum()),
    }


def run_kind(args, kind, texts, targets, parts, model, training) -> list[dict]:
    """The multi-objective RLM (median and mean of the same samples) and every baseline, on one input kind."""
    tr, va, te = (parts[k] for k in ("train", "val", "test"))
    pick = lambda idx: [texts[i] for i in idx]  # noqa: E731
    options = text_options(args, kind)
    rows = []
    rlm = RegressionLM(
        **options,
        target_scale=args.target_scale,
        model=model,
        training=training,
        num_samples=args.samples,
        batch_size=64,
    )
    samples, train_s, predict_s = timed(
        lambda: rlm.fit(pick(tr), targets[tr], objectives=OBJECTIVES, val_texts=pick(va), val_targets=targets[va]),
        lambda: rlm.sample(pick(te), num_samples=args.samples, seed=0),
    )
    extra = truncation(rlm, pick(te)) if kind == "onnx" else {}
    for point in ("median", "mean"):  # the same samples, two point estimates
        measured = scores(point_estimate(samples, point), targets[te], OBJECTIVES)
        rows.append(
            {
                "method": "rlm",
                "point": point,
                "input": kind,
                **measured,
                "train_s": train_s,
                "queries_per_s": len(te) / predict_s,
                **extra,
            }
        )

    seen = np.concatenate([tr, va])  # baselines have no early stopping: they train on train + val
    for name in [b for b in args.baselines.split(",") if b]:
        head = name.startswith("regression_head")
        head_steps = args.head_steps if kind == "arch" else training["steps"]
        head_options = {**options, "model": model, "training": {**training, "steps": head_steps}}
        baseline = make_baseline(name, **(head_options if head else {}))
        predicted, train_s, predict_s = timed(
            lambda b=baseline: b.fit(pick(seen), targets[seen]), lambda b=baseline: b.predict(pick(te))
        )
        rows.append(
            {
                "method": name,
                "input": kind,
                **scores(predicted, targets[te], OBJECTIVES),
                "train_s": train_s,
                "queries_per_s": len(te) / predict_s,
            }
        )
    return rows


def run_finetune(args, texts, targets, flops, parts, model, training) -> list[dict]:
    """Accuracy alone from scratch vs pretrained on the training architectures' FLOPs, then fine-tuned."""
    tr, va, te = (parts[k] for k in ("train", "val", "test"))
    pick = lambda idx: [texts[i] for i in idx]  # noqa: E731
    acc = targets[:, :1]
    options = text_options(args, "onnx")
    rows = []
    start = time.perf_counter()
    pretrained = RegressionLM(
        **options, model=model, training={**training, "steps": args.pretrain_steps}, batch_size=64
    ).fit(pick(tr), flops[tr], objectives=["flops"], val_texts=pick(va), val_targets=flops[va])
    pretrain_s = time.perf_counter() - start
    flops_rho = float(
        spearmanr(point_estimate(pretrained.sample(pick(te), num_samples=16, seed=0))[:, 0], flops[te, 0]).statistic
    )
    for init in (None, pretrained):
        tuned = {**training, "steps": args.finetune_steps}
        if init is not None:
            tuned["learning_rate"] = args.finetune_lr
        rlm = RegressionLM(
            **options, model=model if init is None else None, training=tuned, num_samples=args.samples, batch_size=64
        )
        samples, train_s, _ = timed(
            lambda r=rlm, i=init: r.fit(
                pick(tr), acc[tr], objectives=OBJECTIVES[:1], val_texts=pick(va), val_targets=acc[va], init=i
            ),
            lambda r=rlm: r.sample(pick(te), num_samples=args.samples, seed=0),
        )
        row = {
            "method": "rlm",
            "point": "median",
            "input": "onnx",
            "objectives": "acc",
            "pretrain": "flops" if init is not None else "none",
            **scores(point_estimate(samples), acc[te], OBJECTIVES[:1]),
            "train_s": train_s,
        }
        if init is not None:
            row |= {"pretrain_s": pretrain_s, "pretrain_flops_spearman": flops_rho}
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="nasbench201.csv")
    parser.add_argument("--inputs", default="arch,onnx", help="comma-separated input kinds: arch, onnx")
    parser.add_argument("--onnx-data", type=Path, default=ONNX_DATA, help="collected ONNX-text dataset (.jsonl)")
    parser.add_argument("--collect", action="store_true", help="first collect the split's missing networks")
    parser.add_argument("--collect-only", action="store_true", help="collect the missing networks, then stop")
    parser.add_argument("--workers", type=int, default=2, help="export processes for --collect")
    parser.add_argument("--partial", action="store_true", help="use only collected networks (numbers not comparable)")
    parser.add_argument("--steps", type=int, default=3000, help="RLM training steps")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--encoder-dim", type=int, default=128)
    parser.add_argument("--encoder-layers", type=int, default=2)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument(
        "--target-scale",
        help="how the RLM spells targets: auto (the library's default), raw (before 2026-12-05), quantile, linear",
    )
    parser.add_argument("--onnx-vocab", type=int, default=4096, help="line-level BPE vocabulary for ONNX text")
    parser.add_argument(
        "--onnx-max-len",
        type=int,
        default=256,
        help="ONNX text context, tokens (256: first cell always, stage 1 for 97%%)",
    )
    parser.add_argument("--onnx-steps", type=int, default=1500, help="RLM and regression-head steps on ONNX text")
    parser.add_argument("--samples", type=int, default=64, help="samples per test input")
    parser.add_argument("--baselines", default=",".join(BASELINES), help="comma-separated, or '' for none")
    parser.add_argument("--head-steps", type=int, default=3000, help="steps of the regression heads on cell strings")
    parser.add_argument("--pretrain-steps", type=int, default=700, help="FLOPs pretraining steps (0: no rows)")
    parser.add_argument("--finetune-steps", type=int, default=700, help="accuracy steps, with and without it")
    parser.add_argument("--finetune-lr", type=float, default=3e-4, help="fine-tuning learning rate")
    parser.add_argument("--json", type=Path, help="write {'results': [...]} here")
    args = parser.parse_args()
    try:  # a typo fails now, not after the RLM has trained
        args.baselines = ",".join(baseline_names(args.baselines))
    except ValueError as e:
        parser.error(f"--baselines: {e}")
    kinds = [k for k in args.inputs.split(",") if k]
    if not set(kinds) <= {"arch", "onnx"}:
        raise SystemExit(f"--inputs: unknown {sorted(set(kinds) - {'arch', 'onnx'})}; known: arch, onnx")
    if not args.data.is_file():
        raise SystemExit(f"{args.data}: not found (pass --data path/to/nasbench201.csv)")

    cells, targets = load(args.data)
    parts = split(len(cells))
    if args.collect_only:
        args.collect = True
        by_cell, _, collect_s = onnx_texts(args, cells, np.concatenate(list(parts.values())))
        print(f"{args.onnx_data}: {len(by_cell)} networks; collection {collect_s:.0f} s this run")
        return
    model = {
        "encoder_dim": args.encoder_dim,
        "decoder_dim": args.encoder_dim,
        "encoder_layers": args.encoder_layers,
        "dropout": args.dropout,
    }
    training = {
        "steps": args.steps,
        "batch_size": args.batch_size,
        "learning_rate": args.learning_rate,
        "weight_decay": args.weight_decay,
        "eval_every": max(args.steps // 10, 1),
    }
    rows, notes = [], []
    for kind in kinds:
        start = time.perf_counter()
        texts, kind_parts, flops = cells, parts, None
        if kind == "onnx":
            used = np.concatenate(list(parts.values()))
            by_cell, flops_by_cell, collect_s = onnx_texts(args, cells, used)
            texts = [by_cell.get(c, "") for c in cells]
            flops = np.array([[flops_by_cell.get(c, np.nan)] for c in cells])
            if args.partial:  # the collected architectures, cut 60/10/30 in the split's order
                have = np.array([i for i in used if cells[i] in by_cell], dtype=np.int64)
                a, b = len(have) * 6 // 10, len(have) * 7 // 10
                kind_parts = {"train": have[:a], "val": have[a:b], "test": have[b:]}
            counts = ", ".join(f"{len(v)} {k}" for k, v in kind_parts.items())
            notes.append(f"onnx: {counts} architectures; collection {collect_s:.0f} s this run")
        kind_training = training
        if kind == "onnx":  # lengths vary 3x; each step reads ~4x the tokens of a cell string
            kind_training = training | {
                "bucket_by_length": True,
                "steps": args.onnx_steps,
                "eval_every": max(args.onnx_steps // 10, 1),
            }
        rows += run_kind(args, kind, texts, targets, kind_parts, model, kind_training)
        if kind == "onnx" and args.pretrain_steps > 0:
            rows += run_finetune(args, texts, targets, flops, kind_parts, model, kind_training)
        notes.append(f"{kind}: wall time {time.perf_counter() - start:.0f} s")
    rows.append({"method": "paper", "input": "onnx", **{f"{k}_spearman": v for k, v in PAPER.items()}})

    def label(r: dict) -> str:
        extra = [r[k] for k in ("point", "objectives") if k in r]
        extra += [f"pretrain {r['pretrain']}"] if "pretrain" in r else []
        return r["method"] + (f" ({', '.join(extra)})" if extra else "")

    table = [
        {
            "input": r["input"],
            "method": label(r),
            **{f"{SHORT[o]} ρ": r.get(f"{o}_spearman") for o in OBJECTIVES},
            **{f"{SHORT[o]} τ": r.get(f"{o}_kendall") for o in OBJECTIVES},
            "train s": r.get("train_s"),
            "q/s": r.get("queries_per_s"),
        }
        for r in rows
    ]
    print(
        f"NAS-Bench-201, split train {len(parts['train'])} + val {len(parts['val'])}, test {len(parts['test'])}, "
        f"torch threads {torch.get_num_threads()}"
    )
    print(markdown_table(table, floatfmt=".3f"))
    for r in rows:
        if "tokens_median" in r and r.get("point") == "median":
            print(
                f"ONNX text tokens per test example: median {r['tokens_median']:.0f}, max {r['tokens_max']:.0f}; "
                f"kept {r['kept_fraction_mean']:.1%} on average, {r['truncated_examples']} truncated "
                f"(context {args.onnx_max_len})"
            )
    print("\n".join(notes))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        results = [{k: v for k, v in r.items() if v is not None} for r in rows]
        args.json.write_text(json.dumps({"results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
