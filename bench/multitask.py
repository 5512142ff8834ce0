"""One model for several pillars vs one model per task, at equal total training steps.

Tasks (``--tasks``, by default the first two), each with two objectives:

- ``python``: MBXP Python programs run in the sandbox (``coderlm collect programs --corpus mbxp
  --languages python --twice``): peak memory (tracemalloc) and runtime, split by problem as
  ``bench/programs.py`` does (every test problem unseen in training and validation);
- ``nb201``: NAS-Bench-201 networks as ONNX text (``coderlm collect nas --cells-per-stage 1 --join
  nasbench201.csv``: one cell per stage, which carries the whole architecture in a short text), with
  NAS-Bench-201's CIFAR-10 accuracy and Pixel3 latency; a seeded random split by network;
- ``leetcode-<language>``: one language's LeetCode solutions run on their test inputs (``coderlm collect
  programs --corpus leetcode --languages cpp --text inputs+code``): the language's exact memory label
  (``heap_peak_bytes`` for C++, docs/programs.md) and runtime, split by problem;
- ``kernels``: TorchInductor's C++ kernels (``coderlm collect kernels``), one objective, the kernel's
  latency, split by program as ``bench/kernel_latency.py`` does (test kernels from unseen programs). It
  takes the first number slot; its second is left empty (masked in training, not scored). Kernels are
  read best with ``--pretokenize lines+digits --number-values`` (docs/encoders.md).

Rows per seed: an RLM per task (``--steps`` each), one multi-task RLM on every task's rows
(``--steps`` x tasks: the same total as the per-task models; rows drawn in proportion to each
task's size, training option ``task_sampling``), and GBDT on token n-grams per task. Every RLM
reads the same text (``task: <name>`` first, 512 tokens) through a BPE learned on its own training
texts: ``--vocab-size`` tokens for a per-task model, the per-task models' total for the multi-task
one (``--multi-vocab-size``: a shared 1,024 spells Python programs in 41 % more tokens than their
own 1,024, and ranked them 0.06 lower); every RLM has the same size and recipe
(``bench/programs.py``'s: ranking validation every tenth of training, moving average, the two best
averaged). The tasks share the decoder's two number slots (objective 1: memory / accuracy,
objective 2: runtime / latency), so the multi-task model decodes exactly what a per-task model
decodes; the input says which task. The BPE pre-tokenizer is ``lines`` (merges within a line): with
``code`` ONNX text splits into ~2,400 tokens and the first cell alone takes ~600; with ``lines``
the whole network takes ~260 (Python programs: ~200 either way). Test scores: Spearman and Kendall of the median of
``--samples`` samples per test input.

    python bench/multitask.py --seeds 0 --json out/multitask_s0.json     # a seed per process, in parallel
    python bench/multitask.py --summarize out/multitask_s*.json           # mean +- spread over seeds
    python bench/multitask.py --tasks python,nb201,leetcode-cpp --leetcode out/lc_cpp/leetcode.jsonl ...
    python bench/multitask.py --models multi-task --dim 192 --no-gbdt ...  # equal parameters: 2.39 M vs 2 x 1.13 M
    python bench/multitask.py --bucket-by-length ...                       # batches of similar-length rows
    python bench/multitask.py --tokens --json out/multitask_tokens.json    # test-text tokens under each BPE
    python bench/multitask.py --max-train leetcode-cpp=250 ...             # a task with few labels
    python bench/multitask.py --tasks python,nb201,kernels --pretokenize lines+digits --number-values ...
    python bench/multitask.py --models multi-task --task-weights python=2,kernels=1 ...  # each task's share

``--json`` is rewritten after every model, so a stopped run keeps its finished rows.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau, spearmanr

from coderlm import RegressionLM
from coderlm.atomic import write_atomic
from coderlm.decoding import point_estimate
from coderlm.evaluation import markdown_table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from multitask_data import load_tasks, rows_of

# column names of the tables (a memory label: "mem")
SHORT = {"runtime_s": "time", "c10_test_acc_200ep": "acc", "lat_ms_pixel3": "pixel3", "latency_us": "lat"}


def score(
    method: str, training: str, name: str, objectives: list[str], predicted: np.ndarray, measured: np.ndarray, **extra
) -> list[dict]:
    """A row per objective; a NaN prediction (the model's samples mostly <NaN>: "does not apply") of a measured
    row is left out of the ranking and counted in ``nan_predicted``."""
    out = []
    for j, objective in enumerate(objectives):
        known = ~np.isnan(predicted[:, j])
        rho = spearmanr(predicted[known, j], measured[known, j]).statistic
        tau = kendalltau(predicted[known, j], measured[known, j]).statistic
        out.append(
            {"method": method, "training": training, "task": name, "objective": objective, "spearman": float(rho)}
            | {"kendall": float(tau), "nan_predicted": int((~known).sum()), **extra}
        )
    return out


def vocab_of(args: argparse.Namespace, names: list[str]) -> int:
    """The BPE vocabulary an RLM on these tasks learns: a per-task model's ``--vocab-size``; the multi-task
    model's ``--multi-vocab-size``, by default the per-task models' total."""
    return args.vocab_size if len(names) == 1 else args.multi_vocab_size or args.vocab_size * len(names)


def train_rlm(args: argparse.Namespace, tasks: dict, names: list[str], steps: int, seed: int, slots: str) -> tuple:
    texts, targets, labels = rows_of(tasks, names, "train", slots=slots)
    val_texts, val_targets, val_labels = rows_of(tasks, names, "val", slots=slots)
    if slots == "separate":
        objectives = [o for name in names for o in tasks[name]["objectives"]]
    else:
        objectives = [f"objective_{j + 1}" for j in range(targets.shape[1])]
    model = {"encoder_dim": args.dim, "decoder_dim": args.dim, "encoder_layers": args.layers, "dropout": 0.1}
    rlm = RegressionLM(
        vocab_size=vocab_of(args, names),
        pretokenize=args.pretokenize,
        max_input_len=args.max_input_len,
        model=model | ({"number_values": True} if args.number_values else {}),
        training={
            "steps": steps,
            "batch_size": args.batch_size,
            "learning_rate": args.learning_rate,
            "eval_every": max(steps // 10, 1),
            "val_metric": "spearman",
            "ema_decay": 0.998,
            "patience": args.patience,
            "average_best": 2,
            "seed": seed,
            "bucket_by_length": args.bucket_by_length,
        }
        | ({} if args.target_noise is None else {"target_noise": args.target_noise})
        | (
            {"task_sampling": "weights", "task_weights": args.task_weights}
            if args.task_weights and len(names) > 1
            else {}
        ),
        num_samples=args.samples,
        batch_size=64,
    )
    start = time.perf_counter()
    rlm.fit(
        texts,
        targets,
        objectives=objectives,
        missing=args.missing,
        tasks=labels,
        val_texts=val_texts,
        val_targets=val_targets,
        val_tasks=val_labels,
    )
    return rlm, time.perf_counter() - start


def run(args: argparse.Namespace, tasks: dict, seed: int, results: list[dict]) -> None:
    models = [("per-task", [name], args.steps) for name in tasks]
    if len(tasks) > 1:  # the same total steps as the per-task models together
        models.append(("multi-task", list(tasks), len(tasks) * args.steps))
    for training, names, steps in [m for m in models if m[0] in args.models.split(",")]:
        slots = args.slots if len(names) > 1 else "shared"
        rlm, train_s = train_rlm(args, tasks, names, steps, seed, slots)
        report = {"seed": seed, "steps": steps, "slots": slots, "dim": args.dim, "layers": args.layers}
        report["bucket"] = args.bucket_by_length
        report |= {"number_values": args.number_values, "pretokenize": args.pretokenize, "missing": args.missing}
        widths = {len(tasks[n]["objectives"]) for n in names}  # shared slots leave none empty where widths agree
        report["empty_slots"] = len(names) > 1 and (slots == "separate" or len(widths) > 1)
        report["task_weights"] = args.task_weights if len(names) > 1 else ""
        report["target_noise"] = rlm.fit_report_.get("target_noise")
        report |= {"vocab": vocab_of(args, names), "input_tokens": rlm.fit_report_.get("input_tokens_by_task")}
        report |= {"max_train": args.max_train, "train_rows": {n: len(tasks[n]["parts"]["train"]) for n in names}}
        report["train_s"] = round(train_s, 1)
        report |= {"best_step": rlm.fit_report_.get("best_step"), "steps_run": rlm.fit_report_.get("steps")}
        report["val_rankings"] = rlm.fit_report_.get("val_rankings")  # each task's validation curve
        for name in names:
            texts, measured, _ = rows_of(tasks, [name], "test")
            predicted = point_estimate(rlm.sample(texts, num_samples=args.samples, seed=0), "median")
            width = len(tasks[name]["objectives"])
            if slots == "separate":
                j = sum(len(tasks[n]["objectives"]) for n in names[: names.index(name)])
                predicted = predicted[:, j : j + width]
            predicted = predicted[:, :width]  # shared slots: a task with fewer objectives leaves the rest empty
            results.extend(score("rlm", training, name, tasks[name]["objectives"], predicted, measured, **report))
        print(f"  rlm {training} {'+'.join(names)} seed {seed}: {train_s:.0f}s, best step {report['best_step']}")
        write_report(args, results)
    if args.no_gbdt or seed != args.seeds[0]:
        return
    from coderlm.evaluation.baselines import make_baseline

    for name in tasks:
        texts, targets, _ = rows_of(tasks, [name], "train", "val")
        start = time.perf_counter()
        gbdt = make_baseline("gbdt").fit(texts, targets)
        train_s = time.perf_counter() - start
        test_texts, measured, _ = rows_of(tasks, [name], "test")
        predicted = gbdt.predict(test_texts)
        objectives = tasks[name]["objectives"]
        extra = {"train_s": round(train_s, 1), "max_train": args.max_train}
        results.extend(score("gbdt", "per-task", name, objectives, predicted, measured, **extra))
        write_report(args, results)


def token_rows(args: argparse.Namespace, tasks: dict) -> list[dict]:
    """Input tokens of each task's test texts under the BPEs the RLMs learn: each task's own, and the multi-task
    model's (every task's training texts) at one task's ``--vocab-size`` and at its own (``vocab_of``)."""
    from coderlm.text.bpe import BPETokenizer

    names = list(tasks)
    bpes = [([name], vocab_of(args, [name])) for name in names]
    bpes += [(names, args.vocab_size), (names, vocab_of(args, names))]
    rows = []
    for learned_on, vocab in bpes:
        texts, _, _ = rows_of(tasks, learned_on, "train")
        bpe = BPETokenizer.train(texts, vocab_size=vocab, pretokenize=args.pretokenize)
        for name in learned_on:
            test, _, _ = rows_of(tasks, [name], "test")
            lengths = bpe.encode(test, 1 << 20).lengths
            rows.append(
                {"method": "bpe", "learned_on": "+".join(learned_on), "vocab": vocab, "task": name}
                | {"mean_tokens": round(float(lengths.mean()), 1), "p95_tokens": float(np.percentile(lengths, 95))}
                | {"over_max": int((lengths > args.max_input_len).sum()), "texts": len(test)}
            )
    return rows


def write_report(args: argparse.Namespace, results: list[dict]) -> None:
    if args.json:
        options = {k: str(v) for k, v in vars(args).items()}
        write_atomic(args.json, json.dumps({"results": results, "options": options}, indent=2) + "\n")


def column_of(row: dict) -> str:
    return f"{row['task']}/{SHORT.get(row['objective'], 'mem')}"


def print_tables(results: list[dict]) -> None:
    """Mean over seeds (with half the spread, (max - min) / 2, where there are several) per method, training,
    RLM width, encoder layers and BPE vocabulary."""
    columns = list(dict.fromkeys(column_of(r) for r in results))  # in the order the runs wrote them

    def key(r: dict) -> tuple:
        training = r["training"] + (" (separate slots)" if r.get("slots") == "separate" else "")
        training += " (length buckets)" if r.get("bucket") else ""
        training += f" (train {r['max_train']})" if r.get("max_train") else ""
        training += f" (target noise {r['target_noise']:g})" if r.get("target_noise") else ""
        training += " (number values)" if r.get("number_values") else ""
        empty = r.get("empty_slots", r["training"] == "multi-task")  # runs before 2026-12-07 lack the field
        training += " (empty slots: nan)" if r.get("missing") == "special" and empty else ""
        training += f" (task weights {r['task_weights']})" if r.get("task_weights") else ""
        training += f" ({r['pretokenize']})" if r.get("pretokenize", "lines") != "lines" else ""
        return r["method"], training, r.get("dim", "-"), r.get("layers", "-"), r.get("vocab", "-")

    table = []
    for method, training, dim, layers, vocab in sorted(
        {key(r) for r in results}, key=lambda k: (k[0] != "rlm", k[1], str(k[2:]))
    ):
        mine = [r for r in results if key(r) == (method, training, dim, layers, vocab)]
        cells, counts = {}, set()  # seeds per column: tasks run in separate processes may have different counts
        for column in columns:
            values = [r["spearman"] for r in mine if column_of(r) == column]
            spread = f" ± {(max(values) - min(values)) / 2:.3f}" if len(values) > 1 else ""
            cells[column] = f"{np.mean(values):.3f}{spread}" if values else "-"
            counts |= {len(values)} if values else set()
        seeds = "-".join(str(n) for n in sorted({min(counts), max(counts)}))
        row = {"method": method, "training": training, "width": dim, "layers": layers, "vocab": vocab, "seeds": seeds}
        row |= cells
        row["train s"] = f"{np.mean([r['train_s'] for r in mine]):.0f}"
        table.append(row)
    print(markdown_table(table))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=Path, default=Path("out/programs/mbxp.jsonl"), help="MBXP dataset")
    parser.add_argument("--nets", type=Path, default=Path("out/nb201_1cell/nb201.jsonl"), help="NB201 ONNX dataset")
    parser.add_argument(
        "--leetcode", type=Path, default=Path("out/leetcode/leetcode.jsonl"), help="LeetCode dataset (leetcode-* tasks)"
    )
    parser.add_argument(
        "--kernels",
        default="out/kernels/kernelbench.jsonl,out/kernels/synthetic.jsonl",
        help="comma-separated datasets of coderlm collect kernels (the kernels task)",
    )
    parser.add_argument(
        "--tasks",
        default="python,nb201",
        help="comma-separated: python (MBXP), nb201 (ONNX text), leetcode-<language> (e.g. leetcode-cpp), kernels",
    )
    parser.add_argument("--nb201-val", type=int, default=150, help="NB201 validation networks")
    parser.add_argument("--nb201-test", type=int, default=500, help="NB201 test networks")
    parser.add_argument(
        "--max-train",
        default="",
        help="TASK=N[,TASK=N]: keep the first N of a task's training rows (validation and test unchanged): "
        "a task with few labels, alone or beside the others",
    )
    parser.add_argument("--steps", type=int, default=1500, help="steps of each per-task RLM (multi-task: x tasks)")
    parser.add_argument("--seeds", default="0", help="comma-separated RLM seeds")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument(
        "--target-noise", type=float, help="the RLM's training option target_noise (default: the library's rule)"
    )
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument(
        "--task-weights",
        default="",
        help="the multi-task RLM's training option task_weights (task_sampling 'weights'), e.g. python=2,kernels=1: "
        "each task's share of the batches (default: in proportion to the tasks' rows)",
    )
    parser.add_argument("--vocab-size", type=int, default=1024, help="BPE vocabulary of a per-task RLM")
    parser.add_argument(
        "--multi-vocab-size",
        type=int,
        help="BPE vocabulary of the multi-task RLM (default: --vocab-size x tasks, the per-task models' total; "
        "one shared 1,024 makes the Python programs 41%% longer than their own 1,024 does)",
    )
    parser.add_argument("--pretokenize", default="lines", help="BPE pre-tokenizer (code, lines, lines+digits)")
    parser.add_argument(
        "--number-values",
        action="store_true",
        help="model option number_values: digit runs also read as magnitudes (needs a pre-tokenizer that splits "
        "digits: lines+digits or code)",
    )
    parser.add_argument("--max-input-len", type=int, default=512)
    parser.add_argument("--patience", type=int, default=4, help="stop after this many validations without gain")
    parser.add_argument("--models", default="per-task,multi-task", help="which RLMs to train (comma-separated)")
    parser.add_argument(
        "--slots",
        default="shared",
        choices=["shared", "separate"],
        help="multi-task objectives: shared (two number slots, each task's own meaning) or separate (one column "
        "per task objective, the others empty: what a dataset of mixed target names gives coderlm train)",
    )
    parser.add_argument(
        "--missing",
        default="special",
        choices=["mask", "special"],
        help="a task's empty number slots: learned as the special token nan (the default, as coderlm train's "
        "--missing auto does), which the model then writes for them (what the slots after them are conditioned on "
        "at prediction time too), or masked out of the loss (teacher-forced as 0)",
    )
    parser.add_argument(
        "--bucket-by-length",
        action="store_true",
        help="training option bucket_by_length: batches of similar-length rows (in a multi-task run mostly one "
        "task's rows, with less padding)",
    )
    parser.add_argument("--no-gbdt", action="store_true", help="RLM rows only (e.g. a second seed's process)")
    parser.add_argument("--samples", type=int, default=64, help="samples per test input")
    parser.add_argument("--json", type=Path, help="write {'results': [...]} here, rewritten after every model")
    parser.add_argument("--summarize", type=Path, nargs="+", help="print the table of these runs' --json files")
    parser.add_argument(
        "--tokens", action="store_true", help="only the table of test-text tokens under each RLM's BPE (no training)"
    )
    args = parser.parse_args()
    if args.summarize:
        results = []
        for path in args.summarize:
            report = json.loads(path.read_text())
            options = report.get("options", {})
            # runs before --multi-vocab-size: every RLM learned --vocab-size
            known = {"dim": int(options["dim"]), "vocab": int(options["vocab_size"])} if options else {}
            known |= {"layers": int(options["layers"])} if "layers" in options else {}
            scores = [r for r in report["results"] if "spearman" in r]  # not --tokens rows
            results += [known | r if r["method"] == "rlm" else r for r in scores]
        print_tables(results)
        return
    args.seeds = [int(s) for s in args.seeds.split(",")]
    tasks = load_tasks(args)
    for name, task in tasks.items():
        print(f"{name}: " + ", ".join(f"{part} {len(idx)}" for part, idx in task["parts"].items()))
    if args.tokens:
        rows = token_rows(args, tasks)
        print(markdown_table(rows))
        write_report(args, rows)
        return
    results: list[dict] = []
    for seed in args.seeds:
        run(args, tasks, seed, results)
    print_tables(results)
    write_report(args, results)


if __name__ == "__main__":
    main()
