"""Kernels: latency of TorchInductor's generated C++ kernels from their source, RLM vs baselines.

Reads datasets written by ``coderlm collect kernels`` (default: ``out/kernels/kernelbench.jsonl``
and ``out/kernels/synthetic.jsonl``), keeps the kernel rows (task ``inductor_cpp``; the whole-graph
rows are counted, not trained on) and predicts ``latency_us`` (µs, median of >= 30 timed calls,
one thread). Text: the kernel's name (the ops it fuses), its loop summary (``// loops: N iterations
(...)``, ``coderlm.collect.kernels.texts``) and its C++ source, read with a line-level BPE that keeps
digits apart (``--pretokenize lines+digits``: a loop header becomes a handful of tokens, every number
is read digit by digit). Two splits, each 80%
train (10% of it validates) / 20% test:

- ``program``: by program: every size of a KernelBench program (and each generated program) lands
  in one split, so test kernels come from programs never seen in training;
- ``random``: rows shuffled: other sizes of a test kernel's program may be in training.

Rows: ``loop iterations`` (no training: the iteration count the summary states, as a ranking),
``rlm`` (median of the samples), ``regression_head_norm`` (the same encoder, MSE on
[0, 1]-scaled targets), ``regression_head_log`` (the same after the signed log the trees regress
in), ``gbdt`` and ``knn`` on token n-grams, ``length``, and the two-run noise ceiling (Spearman
between the two timings of the re-timed share; the best any predictor can do).
Columns: Spearman and Kendall over all test kernels, then Spearman per KernelBench level /
synthetic and per kernel kind (pointwise, reduction, softmax, norm, ...). The paper's figure
(Triton kernels of KernelBook on an A6000) is 0.516.

    python bench/kernel_latency.py --json out/kernels_bench.json

``--json`` is rewritten after every method, so a stopped run keeps the rows it finished.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from scipy.stats import kendalltau, spearmanr

from coderlm import RegressionLM
from coderlm.atomic import write_atomic
from coderlm.collect.kernels.texts import iterations
from coderlm.data import read_dataset
from coderlm.decoding import point_estimate
from coderlm.evaluation import markdown_table
from coderlm.evaluation.baselines import baseline_names, make_baseline

BASELINES = ["regression_head_norm", "regression_head_log", "gbdt", "knn", "length"]
DATA = "out/kernels/kernelbench.jsonl,out/kernels/synthetic.jsonl"
PAPER = 0.516  # Spearman of the paper's RLM on KernelBook's Triton kernels (A6000)


def load(paths: list[Path], task: str) -> dict:
    """Kernel rows of ``task`` from every file: texts, targets (n, 1), groups, levels, kinds, reruns."""
    rows = [row for path in paths for row in read_dataset(path) if row.task == task]
    if not rows:
        raise SystemExit(f"no {task} rows in {', '.join(map(str, paths))}")
    return {
        "texts": [r.text for r in rows],
        "targets": np.array([[r.targets["latency_us"]] for r in rows]),
        "groups": [r.group for r in rows],
        "levels": [r.meta.get("level", "?") for r in rows],
        "kinds": [r.meta.get("kind", "?") for r in rows],
        "reruns": np.array([r.meta.get("rerun_latency_us", np.nan) for r in rows]),
        "graphs": sum(1 for path in paths for row in read_dataset(path) if row.task == f"{task}_graph"),
    }


def split(data: dict, how: str, seed: int = 0) -> dict[str, np.ndarray]:
    """80% train (its last eighth validates) / 20% test, by program or by row."""
    n = len(data["texts"])
    rng = np.random.default_rng(seed)
    if how == "random":
        order = rng.permutation(n)
        test, train = order[: n // 5], order[n // 5 :]
    else:
        programs = sorted(set(data["groups"]))
        chosen = set(rng.permutation(programs)[: len(programs) // 5].tolist())
        test = np.array([i for i in range(n) if data["groups"][i] in chosen])
        train = rng.permutation([i for i in range(n) if data["groups"][i] not in chosen])
    if how == "program":  # validation programs unseen too
        held = sorted({data["groups"][i] for i in train})
        val_groups = set(rng.permutation(held)[: len(held) // 8].tolist())
        val = np.array([i for i in train if data["groups"][i] in val_groups])
        train = np.array([i for i in train if data["groups"][i] not in val_groups])
    else:
        val, train = train[: len(train) // 8], train[len(train) // 8 :]
    return {"train": train, "val": val, "test": test}


def scores(predicted: np.ndarray, measured: np.ndarray, levels: list[str], kinds: list[str]) -> dict:
    """Spearman and Kendall over all rows, Spearman per level and per kind (>= 10 rows)."""
    out = {
        "spearman": float(spearmanr(predicted, measured).statistic),
        "kendall": float(kendalltau(predicted, measured).statistic),
    }
    for prefix, labels in (("level", levels), ("kind", kinds)):
        for value in sorted(set(labels)):
            rows = np.array([label == value for label in labels])
            if rows.sum() >= 10:
                out[f"{prefix}_{value}"] = float(spearmanr(predicted[rows], measured[rows]).statistic)
    return out


def write_report(args, results: list[dict], counts: dict, complete: bool) -> None:
    if args.json:
        record = {"results": results, "complete": complete, "data": counts}
        write_atomic(args.json, json.dumps(record, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=DATA, help="comma-separated datasets from coderlm collect kernels")
    parser.add_argument("--task", default="inductor_cpp", help="inductor_cpp (CPU) or triton (CUDA)")
    parser.add_argument("--splits", default="program,random")
    parser.add_argument("--steps", type=int, default=3000, help="RLM training steps")
    parser.add_argument("--head-steps", type=int, default=3000, help="regression head training steps")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--max-input-len", type=int, default=512)
    parser.add_argument("--vocab-size", type=int, default=1024)
    parser.add_argument(
        "--pretokenize",
        default="lines+digits",
        help="lines+digits (default): the boilerplate of a line merges into few tokens, numbers are read "
        "digit by digit (median 640 tokens a kernel with 1024 merges; lines 335 but sizes merge into "
        "tokens; code 1,260)",
    )
    parser.add_argument(
        "--number-values",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="digit tokens also embed their number's log10 value (model option number_values; the RLM and "
        "the regression heads). Default on: 0.875 vs 0.617 without on unseen programs (docs/results.md)",
    )
    parser.add_argument("--samples", type=int, default=64, help="samples per test kernel")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baselines", default=",".join(BASELINES), help="comma-separated, or '' for none")
    parser.add_argument(
        "--rlm",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="train the RLM (--no-rlm: baselines only, e.g. a regression head in a second process)",
    )
    parser.add_argument("--json", type=Path, help="write {'results': [...]} here (rewritten after every method)")
    args = parser.parse_args()
    try:  # a typo fails now, not after the RLM has trained
        args.baselines = ",".join(baseline_names(args.baselines))
    except ValueError as e:
        parser.error(f"--baselines: {e}")
    paths = [Path(p) for p in args.data.split(",") if p and Path(p).is_file()]
    if not paths:
        raise SystemExit(f"{args.data}: not found (run coderlm collect kernels first; see docs/kernels.md)")
    data = load(paths, args.task)
    texts, targets = data["texts"], data["targets"]
    pick = lambda idx: [texts[i] for i in idx]  # noqa: E731
    counts = {
        "kernels": len(texts),
        "programs": len(set(data["groups"])),
        "graphs": data["graphs"],
        "by_level": {lv: data["levels"].count(lv) for lv in sorted(set(data["levels"]))},
        "by_kind": {k: data["kinds"].count(k) for k in sorted(set(data["kinds"]))},
    }
    print(f"{counts}; torch threads {torch.get_num_threads()}")
    results = []
    rerun = ~np.isnan(data["reruns"])
    ceiling = {"spearman": float(spearmanr(targets[rerun, 0], data["reruns"][rerun]).statistic), "n": int(rerun.sum())}
    results.append({"split": "all", "method": "noise ceiling (two runs)", **ceiling})
    results.append({"split": "program", "method": "paper (Triton, KernelBook, A6000)", "spearman": PAPER})

    model = {"encoder_dim": args.dim, "decoder_dim": args.dim, "encoder_layers": args.layers, "dropout": 0.1}
    if args.number_values:
        model["number_values"] = True
    training = {
        "steps": args.steps,
        "batch_size": args.batch_size,
        "learning_rate": args.learning_rate,
        "eval_every": max(args.steps // 10, 1),
        "seed": args.seed,
        "bucket_by_length": True,
    }
    text = {"vocab_size": args.vocab_size, "max_input_len": args.max_input_len, "pretokenize": args.pretokenize}
    for how in args.splits.split(","):
        parts = split(data, how, args.seed)
        tr, va, te = parts["train"], parts["val"], parts["test"]
        levels, kinds = [data["levels"][i] for i in te], [data["kinds"][i] for i in te]
        print(f"split {how}: train {len(tr)}, val {len(va)}, test {len(te)}")
        counted = np.array([float(iterations(texts[i])) for i in te])  # no training: the parsed loop nests
        results.append({"split": how, "method": "loop iterations", **scores(counted, targets[te, 0], levels, kinds)})
        print(f"  loop iterations: {results[-1]['spearman']:.3f}")
        if args.rlm:
            start = time.perf_counter()
            rlm = RegressionLM(
                **text,
                model=model,
                num_samples=args.samples,
                batch_size=32,
                training={**training, "val_metric": "spearman", "ema_decay": 0.998, "patience": 4, "average_best": 2},
            )
            rlm.fit(pick(tr), targets[tr], objectives=["latency_us"], val_texts=pick(va), val_targets=targets[va])
            train_s = time.perf_counter() - start
            start = time.perf_counter()
            samples = rlm.sample(pick(te), num_samples=args.samples, seed=0)
            predict_s = time.perf_counter() - start
            results.append(
                {
                    "split": how,
                    "method": "rlm",
                    "number_values": args.number_values,
                    **scores(point_estimate(samples)[:, 0], targets[te, 0], levels, kinds),
                    "train_s": train_s,
                    "queries_per_s": len(te) / predict_s,
                    "truncated": rlm.fit_report_.get("truncated"),
                    "best_step": rlm.fit_report_.get("best_step"),
                }
            )
            write_report(args, results, counts, complete=False)
        seen = np.concatenate([tr, va])  # baselines have no early stopping: they train on train + val
        for name in [b for b in args.baselines.split(",") if b]:
            options = {}
            if name.startswith("regression_head"):
                options = {
                    **text,
                    "model": model,
                    "training": {**training, "steps": args.head_steps},  # a bar on stderr, as the RLM
                }
            start = time.perf_counter()
            baseline = make_baseline(name, **options).fit(pick(seen), targets[seen])
            train_s = time.perf_counter() - start
            start = time.perf_counter()
            predicted = baseline.predict(pick(te))[:, 0]
            predict_s = time.perf_counter() - start
            results.append(
                {
                    "split": how,
                    "method": name,
                    **({"number_values": args.number_values} if name.startswith("regression_head") else {}),
                    **scores(predicted, targets[te, 0], levels, kinds),
                    "train_s": train_s,
                    "queries_per_s": len(te) / predict_s,
                }
            )
            print(f"  {name}: {results[-1]['spearman']:.3f}")
            write_report(args, results, counts, complete=False)

    columns = sorted({k for r in results for k in r if k.startswith(("level_", "kind_"))})
    table = [
        {
            "split": r["split"],
            "method": r["method"] + (" + number values" if r.get("number_values") else ""),
            "ρ": r.get("spearman"),
            "τ": r.get("kendall"),
            **{c: r.get(c) for c in columns},
            "train s": r.get("train_s"),
            "q/s": r.get("queries_per_s"),
        }
        for r in results
    ]
    print(markdown_table(table, floatfmt=".3f"))
    print(f"noise ceiling over {ceiling['n']} re-timed kernels; data {counts}")
    write_report(args, results, counts, complete=True)


if __name__ == "__main__":
    main()
