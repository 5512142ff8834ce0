"""Programs: per-language Spearman for peak memory and runtime; one RLM for all languages vs baselines.

Reads the dataset written by ``coderlm collect programs`` (default ``out/programs/<corpus>.jsonl``,
``--corpus mbxp``: MBXP problems in several languages; ``--corpus leetcode``: LeetCode solutions run
through per-language harnesses; text as collected: problem description + code by default, for LeetCode
the test inputs' sizes, then the code; task = language; group = problem id). Memory is ``peak_memory_bytes``
for MBXP, and for LeetCode each language's exact label (the row's
``meta.memory_label``: heap_peak_bytes for Python and C++, alloc_bytes for Java, Go, JavaScript and
TypeScript; ``--memory-label`` picks another, e.g. ``peak_rss_bytes``). Two splits, each 80% train
(10% of it validates) / 20% test:

- ``problem``: by problem number (MBPP/17, MBCPP/17, MBJP/17 ... share one number and land in
  the same split): every test problem is unseen in training, in every language; so are the
  validation problems;
- ``random``: rows shuffled (CodeNet's protocol): solutions of a test problem may be in training.

The RLM keeps the weights that rank the validation set best (``--val-metric spearman``: Spearman
of the sample medians within each language, mean over memory and runtime), evaluated 10 times.
On unseen problems the validation loss is lowest after a fifth of training and then climbs
(over-confident distributions) while the ranking keeps improving, so keeping the lowest-loss
weights would rank worse. What is validated and kept is a moving average of the weights
(``--ema-decay 0.998``), which ranks unseen problems better than the live weights of the same run;
training stops after ``--patience 4`` validations without gain, and the model returned is the mean
of the two best-validating averages (``--average-best 2``, training option ``average_best``).
Test inputs get 128 samples each.

Rows: ``rlm`` (one multi-objective model, memory then runtime, all languages in one batch stream;
the input starts with ``language: <name>``; ``--seeds N`` trains N of them, a row each, plus a row
pooling their samples before the median, as ``coderlm.ensemble`` does), ``regression_head_norm``
(the paper's regression head, [0, 1]-normalized per task), ``regression_head_log`` (the same after the
signed log the trees regress in: the fair head where labels span decades), ``gbdt`` and ``knn`` on token n-grams,
``length``; plus the two-run noise ceiling (Spearman between the two profiles of every program,
``--twice`` in the collector; the best any predictor can do). Columns: Spearman per language and
target, and the mean over languages. Within-problem: over test problems with >= 2 passing solutions
in a language, the share of solution pairs whose predicted memory order matches the measured one
(50% = chance; pairs with equal measured memory left out).

    python bench/programs.py --data out/programs/mbxp.jsonl --json out/programs_bench.json
    python bench/programs.py --corpus leetcode --json out/leetcode_bench.json

``--baselines-read window`` gives the baselines only what the RLM reads of each text (its first
``--max-input-len`` tokens): is a gap to GBDT the model or the context?

``--extra-train FILE`` adds another collection's rows (same languages and memory label) to every
split's training rows, for the RLM and the baselines alike; validation, test and the noise ceiling stay
this collection's own. Extra rows of a validation or test problem (by the same problem id) and repeats of a
training row are left out, so a fuller collection of the same corpus, or its single-case rows
(``coderlm collect programs --case-rows``), can be added whole. ``--save-models DIR`` keeps every RLM
trained, and ``--encoders DIR/<name>`` then fine-tunes such a model on this corpus (the labelled-transfer
route, beside pretraining):

    python bench/programs.py --corpus leetcode --data out/lcpy/leetcode.jsonl --languages python \
        --splits problem --save-models out/lc_models
    python bench/programs.py --data out/programs/mbxp.jsonl --languages python --splits problem \
        --encoders out/lc_models/problem-scratch-seed0

``--json`` is rewritten after every method, so a stopped run keeps the rows it finished. ``--runs DIR``
trains each RLM in a run folder (``DIR/<split>-<encoder family>-seed<N>``, checkpointed four times per
validation): the same command run again continues a stopped RLM and loads a finished one, so a schedule of
hours on a CPU can span several sittings:

    python bench/programs.py --corpus leetcode --steps 12000 --runs out/lc_runs --json out/lc_long.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from coderlm import RegressionLM
from coderlm.atomic import write_atomic
from coderlm.builtin import model_folder
from coderlm.decoding import point_estimate
from coderlm.evaluation import markdown_table
from coderlm.model.build import build_tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encoder_families import LABELS, encoder_family, family_options, starting_point
from program_data import collection_stats, extra_training, load, split, with_extra
from program_flags import parse_args
from program_rlm import exact_columns, fit_or_resume, pooled_row, sample_columns
from program_scores import OBJECTIVES, SHORT, per_language, scores

PAPER = "paper: APPS Python memory 0.930; CodeNet per language 0.347 (PHP) .. 0.748 (C++), mean > 0.5"


def label(row: dict) -> str:
    """The method as the tables show it: which encoder, which seed, or how many models pooled."""
    method = row["method"] + LABELS.get(row.get("encoder"), "")
    if row.get("digit_decay", 1.0) != 1.0:
        method += f" digit_decay={row['digit_decay']:g}"
    if row.get("aux_regression", 0.0):
        method += f" aux_regression={row['aux_regression']:g}"
    if row.get("weight_decay", 0.0):
        method += f" weight_decay={row['weight_decay']:g}"
    if row.get("target_noise") is not None:  # set by --target-noise (else the library's default)
        method += f" target_noise={row['target_noise']:g}"
    if row.get("selection"):
        method += f" ({row['selection']})"
    if row.get("extra_train"):
        method += f" (+{row['extra_train']} in training)"
    if row.get("reads") == "window":
        method += " (the RLM's window)"
    if row.get("objective"):  # --rlm-objective: one target learned
        method += f" ({row['objective']} only)"
    if row.get("point") == "exact":
        method += " (exact median)"
    if row.get("pooled"):
        return f"{method} ({row['models']} saved models pooled)"
    if row.get("models", 1) > 1:
        return f"{method} ({row['models']} seeds pooled)"
    return f"{method} seed {row['seed']}" if row.get("seed", 0) > 0 else method


def rlm_window(texts: list[str], train_texts: list[str], vocab_size: int, max_input_len: int) -> list[str]:
    """Each text cut to what a scratch RLM reads of it: the first ``max_input_len`` tokens (``<s>`` is one)
    of a BPE learned on ``train_texts`` as the RLM learns its own."""
    tokenizer = build_tokenizer(train_texts, vocab_size=vocab_size).tokenizer
    keep = max_input_len - 1
    encoded = tokenizer.encode_batch(texts, add_special_tokens=False)
    return [t[: e.offsets[keep - 1][1]] if len(e.ids) > keep else t for t, e in zip(texts, encoded, strict=True)]


def write_report(args: argparse.Namespace, results: list[dict], counts: dict, stats: dict, complete: bool) -> None:
    """The rows so far to ``--json`` (atomically; rewritten after every method, so a stopped run keeps its
    finished rows; ``complete`` says whether every split and method ran)."""
    if not args.json:
        return
    clean = [
        {k: v for k, v in r.items() if v is not None and not (isinstance(v, float) and np.isnan(v))} for r in results
    ]
    report = {
        "results": clean,
        "complete": complete,
        "data": {
            "path": str(args.data),
            "programs": counts,
            "collection": stats,
            "extra_train": args.extra_counts,
            "max_train": args.max_train,
        },
        "options": {k: str(v) for k, v in vars(args).items()},
    }
    write_atomic(args.json, json.dumps(report, indent=2) + "\n")


def main() -> None:
    args = parse_args(__doc__)
    families = {e: encoder_family(e) for e in args.encoders.split(",") if e}  # checked before any work
    args.data = args.data or Path(f"out/programs/{args.corpus}.jsonl")
    if not args.data.is_file():
        raise SystemExit(f"{args.data}: not found (run coderlm collect programs first; see docs/programs.md)")
    languages = args.languages.split(",") if args.languages else None
    own = load(args.data, languages, args.memory_label)
    counts = {lang: own["tasks"].count(lang) for lang in sorted(set(own["tasks"]))}
    print(f"{len(own['texts'])} programs: {counts}; torch threads {torch.get_num_threads()}")
    stats = collection_stats(args.data)
    extras = {}
    for path in [Path(p) for p in args.extra_train.split(",") if p]:
        if not path.is_file():
            raise SystemExit(f"--extra-train {path}: not found")
        extras[path.stem] = load(path, languages, args.memory_label)
        print(f"  + {len(extras[path.stem]['texts'])} training programs from {path}")
        if not extras[path.stem]["texts"]:
            raise SystemExit(f"--extra-train {path}: no rows of the languages {languages or 'asked'}")
    extra_train = "+".join(extras) or None
    data = with_extra(own, extras)
    args.extra_counts = {name: len(more["texts"]) for name, more in extras.items()}
    texts, targets, tasks = data["texts"], data["targets"], data["tasks"]
    pick = lambda idx: [texts[i] for i in idx]  # noqa: E731
    results = []

    ceiling = per_language(own["reruns"], own["targets"], own["tasks"])
    results.append({"split": "all", "method": "noise ceiling (two runs)", **ceiling})

    model = {"encoder_dim": args.dim, "decoder_dim": args.dim, "encoder_layers": args.layers, "dropout": 0.1}
    # fine-tuned encoders' attention-weight dropout, when given (default: each encoder's own)
    attention = (
        {} if args.encoder_attention_dropout is None else {"encoder_attention_dropout": args.encoder_attention_dropout}
    )
    if args.number_values:
        model["number_values"] = True
    training = {
        "steps": args.steps,
        "batch_size": args.batch_size,
        "learning_rate": args.learning_rate,
        "eval_every": max(args.steps // 10, 1),
    }
    rlm_training = {
        **training,
        "val_metric": args.val_metric,
        "ema_decay": args.ema_decay,
        "patience": args.patience,
        "average_best": args.average_best,
        "digit_decay": args.digit_decay,
        "aux_regression": args.aux_regression,
        "weight_decay": args.weight_decay,
        "augment": args.augment,
        "max_seconds": args.max_seconds,
        "precision": args.precision,
        "val_task_weights": args.val_task_weights,
        "task_sampling": args.task_sampling,
        "task_temperature": args.task_temperature,
    }
    if args.target_noise is not None:
        rlm_training["target_noise"] = args.target_noise
    if args.runs:  # a stopped run loses at most a quarter of the steps between validations
        rlm_training["checkpoint_every"] = max(training["eval_every"] // 4, 1)
    # the objectives the RLMs learn (columns of targets): both, or the one --rlm-objective names
    learned = [OBJECTIVES.index(args.rlm_objective)] if args.rlm_objective else list(range(len(OBJECTIVES)))
    for how in args.splits.split(","):
        parts = split(own, how)
        if args.max_train:
            parts["train"] = parts["train"][: args.max_train]
        held = np.concatenate([parts["val"], parts["test"]])
        tr = np.concatenate([parts["train"], extra_training(data, parts["train"], held)])
        va, te = parts["val"], parts["test"]
        test_tasks, test_groups = [tasks[i] for i in te], [data["groups"][i] for i in te]
        print(f"split {how}: train {len(tr)}, val {len(va)}, test {len(te)}")

        test = {"split": how, "measured": targets[te], "tasks": test_tasks, "groups": test_groups}

        for encoder, (kind, folder) in families.items():
            family = {"encoder": kind, "init": folder, "extra_train": extra_train}
            family |= {"number_values": True} if args.number_values else {}
            rlm_model, extra = family_options(kind, folder, model, args.dim, args.init_learning_rate)
            if kind in ("pretrained", "untrained", "model"):
                rlm_model = rlm_model | attention
                family |= attention
            settings = {k: rlm_training[k] for k in ("val_metric", "ema_decay", "average_best")}
            options = ("digit_decay", "aux_regression", "weight_decay", "augment", "val_task_weights", "task_sampling")
            options += ("task_temperature",) if args.task_sampling == "temperature" else ()
            settings |= {k: rlm_training[k] for k in options} | {"target_noise": args.target_noise}
            settings |= {"objective": args.rlm_objective} if args.rlm_objective else {}
            pooled = []
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                start = time.perf_counter()
                rlm = RegressionLM(
                    vocab_size=args.vocab_size,
                    max_input_len=args.max_input_len,
                    model=rlm_model,
                    training={**rlm_training, "seed": seed, **extra},
                    num_samples=args.samples,
                    batch_size=64,
                    device=args.device,
                )
                name = f"{how}-{kind}-seed{seed}" + (f"-{args.rlm_objective}" if args.rlm_objective else "")
                run = args.runs / name if args.runs else None
                with starting_point(kind, folder, seed) as start_from:
                    rlm = fit_or_resume(
                        rlm,
                        run,
                        texts=pick(tr),
                        targets=targets[tr][:, learned],
                        objectives=[OBJECTIVES[j] for j in learned],
                        tasks=[tasks[i] for i in tr],
                        val_texts=pick(va),
                        val_targets=targets[va][:, learned],
                        val_tasks=[tasks[i] for i in va],
                        init=start_from,
                    )
                train_s = rlm.fit_report_["train_seconds"] if run else time.perf_counter() - start
                if args.save_models:  # e.g. as --encoders FOLDER of a run on another corpus
                    rlm.save(args.save_models / name)
                start = time.perf_counter()
                samples = sample_columns(rlm, pick(te), args.samples)  # NaN: a target not learned
                predict_s = time.perf_counter() - start
                pooled.append(samples)
                predicted = point_estimate(samples, "median")
                results.append(
                    scores(predicted, "rlm", test, **family, models=1, seed=seed)
                    | {
                        "train_s": train_s,
                        "queries_per_s": len(te) / predict_s,
                        "learning_rate": rlm.training["learning_rate"],
                        "truncated": rlm.fit_report_.get("truncated"),
                        "best_step": rlm.fit_report_.get("best_step"),
                        "steps_run": rlm.fit_report_.get("steps"),
                        "out_of_time": rlm.fit_report_.get("out_of_time"),
                        "kept_steps": ",".join(map(str, rlm.fit_report_.get("kept_steps", []))),
                        **settings,
                    }
                )
                if args.exact:  # the same model's exact median: no samples (coderlm.decoding.walk)
                    predicted = exact_columns(rlm, pick(te))
                    results.append(scores(predicted, "rlm", test, **family, models=1, seed=seed, point="exact"))
                print(f"  rlm ({encoder}) seed {seed}: {train_s:.0f}s")
                write_report(args, results, counts, stats, complete=False)
            if args.seeds > 1:
                # the models' samples side by side (coderlm.ensemble.pooled_samples), then the median
                predicted = point_estimate(np.concatenate(pooled, axis=1), "median")
                timed = [r["train_s"] for r in results if "train_s" in r]  # the sampled rows (not --exact's)
                train_s = sum(timed[-args.seeds :])
                results.append(scores(predicted, "rlm", test, **family, models=args.seeds, train_s=train_s, **settings))
                write_report(args, results, counts, stats, complete=False)
        if args.pool:
            results.append(pooled_row(args.pool, pick(te), test, args.samples))
            print(f"  rlm, {len(args.pool)} saved models pooled")
            write_report(args, results, counts, stats, complete=False)
        from coderlm.evaluation.baselines import make_baseline

        seen = np.concatenate([tr, va])
        baseline_texts = texts  # the baselines' view of the texts
        if args.baselines_read == "window" and args.baselines:
            baseline_texts = rlm_window(texts, pick(tr), args.vocab_size, args.max_input_len)
        read = lambda idx, view=baseline_texts: [view[i] for i in idx]  # noqa: E731
        for name in [b for b in args.baselines.split(",") if b]:
            options, head = {}, {}
            if name.startswith("regression_head"):
                options = {
                    "model": model,
                    "training": {**training, "steps": args.head_steps},
                    "vocab_size": args.vocab_size,
                    "max_input_len": args.max_input_len,
                }
                if args.head_encoder:  # the head on the pretrained encoder, trained with it
                    folder = str(model_folder(args.head_encoder))
                    options["model"] = {**model, "encoder": folder, "train_encoder": True, **attention}
                    options["training"]["learning_rate"] = args.init_learning_rate
                    head = {"encoder": "pretrained", "init": folder}
            start = time.perf_counter()
            if options and args.head_validation:  # the RLM's selection, on its validation rows
                keys = ("val_metric", "val_task_weights", "ema_decay", "patience", "average_best")
                options["training"] |= {k: rlm_training[k] for k in keys}
                head["selection"] = "validation"
                baseline = make_baseline(name, **options).fit(
                    read(tr), targets[tr], [tasks[i] for i in tr], read(va), targets[va], [tasks[i] for i in va]
                )
            else:
                baseline = make_baseline(name, **options).fit(read(seen), targets[seen], [tasks[i] for i in seen])
            train_s = time.perf_counter() - start
            predicted = baseline.predict(read(te), tasks=test_tasks)
            row = scores(predicted, name, test, train_s=train_s, reads=args.baselines_read, extra_train=extra_train)
            row |= head
            results.append(row)
            print(f"  {name} {train_s:.0f}s")
            write_report(args, results, counts, stats, complete=False)

    languages = sorted(set(tasks))
    columns = [f"{lang}/{SHORT[o]}" for o in OBJECTIVES for lang in [*languages, "mean"]]
    table = [{"split": r["split"], "method": label(r), **{c: r.get(c) for c in columns}} for r in results]
    print(markdown_table(table, floatfmt=".3f"))
    pairs = [
        {"split": r["split"], "method": label(r), **{lang: r.get(f"{lang}/pairs") for lang in languages}}
        for r in results
        if any(k.endswith("/pairs") for k in r)
    ]
    if pairs:
        n = {lang: next((r.get(f"{lang}/n_pairs") for r in results if f"{lang}/n_pairs" in r), 0) for lang in languages}
        print(f"within-problem memory pairs ordered correctly (pairs per language on the first split: {n})")
        print(markdown_table(pairs, floatfmt=".3f"))
    print(PAPER)
    write_report(args, results, counts, stats, complete=True)


if __name__ == "__main__":
    main()
