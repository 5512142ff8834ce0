"""Encoders: from scratch vs frozen pretrained MiniLM (with/without structure markers, with/without cache).

Two tasks, each skipped when its dataset file is absent:

* ``nb201``: NAS-Bench-201 networks as ONNX text (``coderlm collect nas --join``) ->
  CIFAR-10 test accuracy, Intel Gold 6240 latency, FLOPs. Seeded group split (group = cell).
* ``python``: Python programs (MBPP, profiled by ``coderlm collect programs``) -> peak memory
  in bytes. Seeded group split (group = problem), so test problems are unseen.

Rows (same split, same decoder, same steps and batch):

* ``scratch``: encoder trained from scratch on a BPE vocabulary learned from the training texts;
* ``minilm plain + cache``: frozen all-MiniLM-L6-v2, its own tokenizer as is (newlines and
  indentation dropped, lowercased), encoder states cached;
* ``minilm structure + cache``: the same with reversible newline/indent markers;
* ``minilm structure, no cache``: the same model run on raw tokens each step. Cached and
  uncached training compute the same losses (tests/training/test_encoder_cache.py), so by
  default this row runs only ``--uncached-steps`` steps to measure its speed; with
  ``--uncached-steps`` equal to ``--steps`` it trains fully and is scored too.

Columns: Spearman per objective on the test split (median of ``--samples`` samples),
training wall time (cache building included), training examples/s (over that whole time,
and over the steps alone once the states are cached).

    python bench/encoders.py --json out/encoders.json
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

import numpy as np
import torch
from scipy.stats import spearmanr

from coderlm import RegressionLM
from coderlm.data.splits import group_split
from coderlm.evaluation import markdown_table

ROOT = Path(__file__).resolve().parents[1]
TASKS = {
    # MiniLM reads 512 tokens of ONNX text: the stem and the first cell, which NB201 repeats (256 tokens miss it)
    "nb201": {
        "objectives": ["c10_test_acc_200ep", "lat_ms_gold_6240", "flops"],
        "task": None,
        "pretokenize": "lines",
        "minilm_len": 512,
    },
    "python": {"objectives": ["peak_memory_bytes"], "task": "python", "pretokenize": "code", "minilm_len": 256},
}


def read_rows(path: Path, objectives: list[str], task: str | None, limit: int) -> tuple[list, np.ndarray, list]:
    """Texts, targets (n, k) and groups of complete rows; a half-written last line (a collector at work) is skipped."""
    texts, targets, groups = [], [], []
    with open(path) as f:
        for line in f:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            values = [row.get("targets", {}).get(name) for name in objectives]
            if (task is not None and row.get("task") != task) or any(v is None for v in values):
                continue
            texts.append(row["text"])
            targets.append(values)
            groups.append(str(row.get("group") or len(groups)))
            if len(texts) == limit:
                break
    return texts, np.asarray(targets, dtype=np.float64), groups


def run_row(
    name: str, rlm: RegressionLM, train: tuple, test: tuple | None, objectives: list[str], samples: int
) -> dict:
    start = time.perf_counter()
    rlm.fit(train[0], train[1], objectives=objectives)
    seconds = time.perf_counter() - start
    config = rlm.training
    row = {
        "method": name,
        "train_s": seconds,
        "steps": config["steps"],
        "examples_per_s": config["steps"] * config["batch_size"] / seconds,
        "cache_s": rlm.fit_report_.get("encoder_cache", {}).get("seconds"),
        "truncated": rlm.fit_report_["truncated"],
    }
    if row["cache_s"] is not None:  # steady state: the steps alone, once the states are cached
        row["examples_per_s_steps"] = config["steps"] * config["batch_size"] / (seconds - row["cache_s"])
    if test is not None:
        predicted = rlm.predict(test[0], num_samples=samples)
        for j, objective in enumerate(objectives):
            row[f"{objective}_spearman"] = float(spearmanr(predicted[:, j], test[1][:, j]).statistic)
    print(json.dumps(row), flush=True)
    return row


def bench_task(name: str, path: Path, args: argparse.Namespace) -> list[dict]:
    spec = TASKS[name]
    objectives = spec["objectives"]
    texts, targets, groups = read_rows(path, objectives, spec["task"], args.max_rows)
    parts = group_split(groups, {"train": 1 - args.test_fraction, "test": args.test_fraction}, seed=args.seed)
    pick = lambda idx: ([texts[i] for i in idx], targets[idx])  # noqa: E731
    train, test = pick(parts["train"]), pick(parts["test"])
    print(f"{name}: {len(train[0])} train / {len(test[0])} test rows from {path}", flush=True)
    decoder = {"decoder_dim": args.decoder_dim, "decoder_heads": 4, "decoder_layers": 2}
    training = {
        "steps": args.steps,
        "batch_size": args.batch_size,
        "learning_rate": args.learning_rate,
        "progress": False,
        "seed": args.seed,
    }
    common = {"num_samples": args.samples, "batch_size": 32}
    scratch = RegressionLM(
        vocab_size=args.vocab_size,
        pretokenize=spec["pretokenize"],
        max_input_len=args.scratch_len,
        model={"encoder_dim": args.decoder_dim, "encoder_heads": 4, **decoder},
        training=training,
        **common,
    )
    minilm = {"encoder": "minilm", **decoder}
    cached = {**training, "encoder_cache": "memory"}

    def pretrained(markers: str, train_options: dict) -> RegressionLM:
        return RegressionLM(
            layout_markers=markers,
            max_input_len=args.minilm_len or spec["minilm_len"],
            model=minilm,
            training=train_options,
            **common,
        )

    wanted = set(args.rows.split(","))
    rows = []
    if "scratch" in wanted:
        rows.append(run_row("scratch", scratch, train, test, objectives, args.samples))
    if "plain" in wanted:
        rows.append(run_row("minilm plain + cache", pretrained("never", cached), train, test, objectives, args.samples))
    if "structure" in wanted:
        rows.append(
            run_row("minilm structure + cache", pretrained("always", cached), train, test, objectives, args.samples)
        )
    if "uncached" in wanted:
        uncached_full = args.uncached_steps >= args.steps
        uncached = {**training, "steps": min(args.uncached_steps, args.steps)}
        rows.append(
            run_row(
                "minilm structure, no cache",
                pretrained("always", uncached),
                train,
                test if uncached_full else None,
                objectives,
                args.samples,
            )
        )
    for row in rows:
        row.update(task=name, train_rows=len(train[0]), test_rows=len(test[0]))
    by_method = {r["method"]: r for r in rows}
    if {"minilm structure + cache", "minilm structure, no cache"} <= set(by_method):
        cached_row = by_method["minilm structure + cache"]
        cached_row["cache_speedup"] = (
            cached_row["examples_per_s"] / by_method["minilm structure, no cache"]["examples_per_s"]
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--nb201",
        type=Path,
        default=ROOT / "out" / "nb201_onnx" / "nb201.jsonl",
        help="NAS-Bench-201 ONNX-text dataset (skipped when absent)",
    )
    parser.add_argument(
        "--python",
        type=Path,
        default=ROOT / "out" / "programs" / "mbxp.jsonl",
        help="profiled programs dataset; rows of task 'python' (skipped when absent)",
    )
    parser.add_argument("--tasks", default="nb201,python", help="comma-separated subset of nb201,python")
    parser.add_argument("--max-rows", type=int, default=600, help="rows read per task (default 600)")
    parser.add_argument("--test-fraction", type=float, default=0.2)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument(
        "--uncached-steps", type=int, default=20, help="steps of the uncached row (speed only unless >= --steps)"
    )
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--decoder-dim", type=int, default=64, help="decoder width (and the scratch encoder's)")
    parser.add_argument("--vocab-size", type=int, default=1024, help="scratch encoder's BPE vocabulary")
    parser.add_argument("--scratch-len", type=int, default=512, help="scratch encoder's max input tokens")
    parser.add_argument(
        "--minilm-len",
        type=int,
        default=0,
        help="MiniLM's max input tokens (default: 512 for nb201, "
        "256 for python; MiniLM was trained on 256, has 512 positions)",
    )
    parser.add_argument("--samples", type=int, default=32, help="samples per test input")
    parser.add_argument(
        "--rows",
        default="scratch,plain,structure,uncached",
        help="comma-separated subset of scratch,plain,structure,uncached",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write {'results': [...]} here")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="coderlm: %(message)s")

    rows, skipped = [], {}
    for name in [t for t in args.tasks.split(",") if t]:
        path = getattr(args, name)
        if not path.is_file():
            skipped[name] = f"{path} not found"
            print(f"{name}: skipped ({path} not found)", flush=True)
            continue
        rows += bench_task(name, path, args)

    short = {
        "c10_test_acc_200ep": "acc",
        "lat_ms_gold_6240": "cpu lat",
        "flops": "flops",
        "peak_memory_bytes": "memory",
    }
    for name in sorted({r["task"] for r in rows}):
        table = [
            {
                "method": r["method"],
                **{f"{short[o]} ρ": r.get(f"{o}_spearman") for o in TASKS[name]["objectives"]},
                "steps": r["steps"],
                "train s": r["train_s"],
                "cache s": r.get("cache_s"),
                "examples/s": r["examples_per_s"],
                "examples/s after cache": r.get("examples_per_s_steps"),
            }
            for r in rows
            if r["task"] == name
        ]
        print(f"\n{name}, torch threads {torch.get_num_threads()}")
        print(markdown_table(table, floatfmt=".3f"))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        results = [{k: v for k, v in r.items() if v is not None} for r in rows]
        args.json.write_text(
            json.dumps(
                {"args": {k: str(v) for k, v in vars(args).items()}, "skipped": skipped, "results": results}, indent=2
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
