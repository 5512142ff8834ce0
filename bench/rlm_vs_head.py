"""The RLM against its own ablation: the same encoder with a regression head, same data, same steps.

NAS-Bench-201 cell strings (short texts: fast), the five objectives of ``bench/nasbench201.py``, its
split (the last 1,000 networks of a seeded permutation are the test set), and training sets of
several sizes cut from the front of its 2,000 training networks (a tenth, at least 20, validates the
RLM's weight selection; the regression head trains on those too and keeps its final weights, or with
``--head-validation`` selects its weights on them by the RLM's rule). Each RLM variant
is a list of options changed from the defaults, e.g.

    python bench/rlm_vs_head.py --train 200,1800 --seeds 0,1 \\
        --variants "default;digit_decay=0.3;digits=2" --json out/rlm_vs_head.json

Keys: any training option (``digit_decay``, ``val_metric``, ``ema_decay``, ...), any model option
(``dropout``, ``encoder_layers``, ...), ``digits`` (mantissa digits of the P10 number format),
``target_scale`` (``quantile``: targets spelled by their training rank; ``linear``: in proportion to their
training range), ``views`` (rows for the same model's test samples drawn also equally from each text
and ``views`` - 1 rewrites of it: ONNX texts in other node orders, test-time augmentation) and
``validation`` (``none``: the RLM trains on the validation rows too and keeps its final weights, as the
regression head does and as ``coderlm train`` does without ``--val``).
``--synthetic raw`` replaces the five objectives by two exact costs of each cell, one a sum over its
operations and one a maximum over its paths; ``--synthetic outlier`` the second in values shaped like the
accuracy (``bench/synthetic_cells.py``).
With ``--data`` a collected ONNX-text dataset (``coderlm collect nas``) the texts are ONNX graphs,
read and trained as ``coderlm quickstart --from-scratch`` does (line BPE of 1,024, 640 tokens,
batches of 16 by length, ranking validation, the library's start rate: 3e-4 on ONNX text of fewer than 2,000
rows, as on fewer than 500 cell strings; the variant ``learning_rate=0.001`` gives the usual rate), test
rows ``--test``:

    coderlm collect nas --count 600 --cells-per-stage 1 --labels flops,latency_cpu --out out/qs600
    python bench/rlm_vs_head.py --data out/qs600/nb201.jsonl --train 160 --steps 600 --seeds 0,1,2

``--encoders scratch,FOLDER`` adds rows that start from a pretrained encoder (``coderlm pretrain``'s
output: ``bench/encoder_families.py``, as ``bench/programs.py --encoders``), fine-tuned at
``--init-learning-rate``; the regression head then runs on each encoder too (the same encoder, steps
and batches). ``untrained:FOLDER`` is the control: its architecture and BPE, fresh weights.
``--head-learning-rate`` trains the scratch head at another rate (its rows' variant says which), as a variant
``learning_rate=...`` does the RLM; ``--head-augment N`` trains it on N rewritten copies of each text too (ONNX
texts in other node orders), as the variant ``augment=N`` does the RLM. ``--head-validation`` gives the head
the RLM's weight selection (its rows' variant says ``validation``): it trains on the training rows only,
is scored on the validation rows every ``eval_every`` steps by the RLM's ``val_metric`` (ranking on ONNX
text, squared error where the RLM's is likelihood) and keeps the best moving average of its weights (from
scratch, the RLM's ``ema_decay``).

Spearman on the test rows (cell strings: 1,000 networks) of two point estimates of the same 64 samples
per network (the median, and the trimmed mean: ``coderlm.decoding.trimmed_mean``); one row per (method,
variant, point, training size, seed), and a mean-over-seeds table with the spread. ``--summarize OLD.json ...`` prints
the tables of earlier runs together.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from coderlm import RegressionLM
from coderlm.data import read_dataset
from coderlm.decoding import point_estimate
from coderlm.evaluation import markdown_table
from coderlm.evaluation.baselines import make_baseline
from coderlm.model.config import ModelConfig
from coderlm.numbers import P10
from coderlm.text.augment import variants
from coderlm.training.config import TrainConfig
from coderlm.training.start_rate import start_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encoder_families import encoder_family, family_options, starting_point
from nasbench201 import DATA, OBJECTIVES, SHORT, load
from synthetic_cells import SETS, synthetic_targets

BENCH_KEYS = {"digits", "target_scale", "validation", "views"}  # variant keys this bench reads itself
MODEL = {"encoder_dim": 128, "decoder_dim": 128, "encoder_layers": 2, "dropout": 0.1}  # RLM and head alike


def parse_variant(spec: str) -> dict:
    """``"default"`` or ``key=value+key=value`` -> options by key (values read as JSON where they parse)."""
    if spec == "default":
        return {}
    options = {}
    for part in spec.split("+"):
        key, sep, value = part.partition("=")
        if not sep:
            raise SystemExit(f"--variants: {part!r} is not key=value")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    if options.get("validation", "split") not in ("split", "none"):
        raise SystemExit(f"--variants: validation={options['validation']!r} is not split or none")
    known = BENCH_KEYS | set(TrainConfig.__dataclass_fields__) | set(ModelConfig.__dataclass_fields__)
    unknown = sorted(set(options) - known)
    if unknown:
        raise SystemExit(f"--variants: unknown option(s) {unknown} in {spec!r}")
    return options


@dataclasses.dataclass
class Task:
    """Texts and targets, how they are read and trained, and the fixed test rows."""

    texts: list[str]
    targets: np.ndarray
    objectives: list[str]
    short: dict[str, str]  # column name per objective
    text: dict  # tokenizer options (the same for the RLM and the head)
    training: dict  # the RLM recipe's training options (the head gets the same steps and batch)
    test: int  # test rows: the last of the permutation

    def parts(self, train: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Train, validation and test indices: a seed-0 permutation, cut at ``train``."""
        order = np.random.default_rng(0).permutation(len(self.texts))
        if train > len(order) - self.test:
            raise SystemExit(f"--train {train}: only {len(order) - self.test} rows outside the test set")
        val = max(train // 10, 20)
        return order[: train - val], order[train - val : train], order[-self.test :]

    def pick(self, rows: np.ndarray) -> list[str]:
        return [self.texts[i] for i in rows]

    def spearman(self, predicted: np.ndarray, rows: np.ndarray) -> dict[str, float]:
        measured = self.targets[rows]
        return {
            self.short[o]: float(spearmanr(predicted[:, j], measured[:, j]).statistic)
            for j, o in enumerate(self.objectives)
        }


def cell_task(path: Path, args) -> Task:
    """NAS-Bench-201 cell strings, ``bench/nasbench201.py``'s objectives, split and recipe; with
    ``--synthetic`` two exact costs of each cell instead (``bench/synthetic_cells.py``)."""
    texts, targets = load(path)
    objectives, short = OBJECTIVES, SHORT
    if args.synthetic:
        targets, objectives = synthetic_targets(texts, args.synthetic), list(SETS[args.synthetic])
        short = {name: name for name in objectives}
    elif args.objectives:  # a subset, by dataset or short name
        names = {name: o for o in objectives for name in (o, short[o])}
        unknown = [o for o in args.objectives.split(",") if o not in names]
        if unknown:
            raise SystemExit(f"--objectives: {unknown} not among {sorted(names)}")
        chosen = [names[o] for o in args.objectives.split(",")]
        targets = targets[:, [objectives.index(o) for o in chosen]]
        objectives = chosen
    training = {"batch_size": args.batch_size or 32, "eval_every": max(args.steps // 10, 1)}
    return Task(texts, targets, objectives, short, {"vocab_size": 512, "max_input_len": 64}, training, 1000)


def onnx_task(path: Path, args) -> Task:
    """A collected ONNX-text dataset (``coderlm collect nas``), read and trained as ``coderlm quickstart
    --from-scratch`` does; objectives: ``--objectives`` or every target of its first row."""
    rows = read_dataset(path)
    objectives = args.objectives.split(",") if args.objectives else list(rows[0].targets)
    missing = [o for o in objectives if any(o not in r.targets for r in rows)]
    if missing:
        raise SystemExit(f"{path}: objective(s) {missing} missing in some rows")
    targets = np.array([[r.targets[o] for o in objectives] for r in rows])
    text = {"vocab_size": 1024, "pretokenize": "lines", "max_input_len": 640}
    training = {
        "batch_size": args.batch_size or 16,
        "bucket_by_length": True,
        "val_metric": "spearman",
        "eval_every": max(args.steps // 8, 1),
    }
    return Task([r.text for r in rows], targets, objectives, {o: o for o in objectives}, text, training, args.test)


def sample_views(rlm: RegressionLM, texts: list[str], samples: int, views: int) -> np.ndarray:
    """``samples`` per text, drawn from the text itself and, with ``views`` > 1, equally from ``views`` - 1
    rewrites of it (``coderlm.text.augment``: ONNX text in other node orders); a text with fewer rewrites
    repeats itself."""
    per = samples // views
    parts = [rlm.sample(texts, num_samples=per + samples % views, seed=0)]
    if views == 1:
        return parts[0]
    rewrites = [variants(text, views - 1, seed=i) for i, text in enumerate(texts)]
    for v in range(1, views):
        view = [copies[v - 1] if v <= len(copies) else text for text, copies in zip(texts, rewrites, strict=True)]
        parts.append(rlm.sample(view, num_samples=per, seed=v))
    return np.concatenate(parts, axis=1)


def run_rlm(args, task: Task, options: dict, split, seed: int, family: tuple) -> dict[str, dict]:
    tr, va, te = split
    kind, folder = family
    training_keys = set(TrainConfig.__dataclass_fields__)
    model = MODEL | {k: v for k, v in options.items() if k not in training_keys | BENCH_KEYS}
    model, extra = family_options(kind, folder, model, MODEL["decoder_dim"], args.init_learning_rate)
    training = task.training | {"steps": args.steps, "seed": seed} | extra  # the trainer's progress bar on stderr
    training |= {k: v for k, v in options.items() if k in training_keys}
    number_format = P10(digits=options["digits"]) if "digits" in options else None
    scale = options.get("target_scale")
    rlm = RegressionLM(
        number_format, target_scale=scale, **text_options(task, kind), model=model, training=training, batch_size=64
    )
    y, pick = task.targets, task.pick
    validation = {"val_texts": pick(va), "val_targets": y[va]}
    if options.get("validation") == "none":  # every row trains; no selection, the final weights
        tr, validation = np.concatenate([tr, va]), {}
    with starting_point(kind, folder, seed) as init:
        rlm.fit(pick(tr), y[tr], objectives=task.objectives, init=init, **validation)
    best = {"best_step": rlm.fit_report_.get("best_step"), "learning_rate": rlm.fit_report_["learning_rate"]}
    by_point = {}
    for views in sorted({1, options.get("views", 1)}):  # the same model, sampled both ways
        samples = sample_views(rlm, pick(te), args.samples, views)
        for point in ("median", "trimmed"):
            name = point if views == 1 else f"{point}, {views} views"
            by_point[name] = task.spearman(point_estimate(samples, point), te) | best
    by_point["exact"] = task.spearman(rlm.predict(pick(te), point="exact"), te) | best  # no samples
    return by_point


def text_options(task: Task, kind: str) -> dict:
    """The task's tokenizer options; a pretrained encoder (or its untrained twin) brings its own tokenizer."""
    own = kind in ("pretrained", "untrained")
    return {k: v for k, v in task.text.items() if not (own and k in ("vocab_size", "pretokenize"))}


def run_head(args, task: Task, split, seed: int, family: tuple) -> dict[str, float]:
    tr, va, te = split
    training = {"steps": args.steps, "batch_size": task.training["batch_size"], "seed": seed}
    model = MODEL
    kind, folder = family
    if kind == "pretrained":  # the head on the pretrained encoder, trained with it, as the RLM is
        model = MODEL | {"encoder": folder, "train_encoder": True}
        training["learning_rate"] = args.init_learning_rate
    elif args.head_learning_rate:
        training["learning_rate"] = args.head_learning_rate
    if args.head_augment:
        training["augment"] = args.head_augment
    if args.head_validation:  # the RLM's selection: its validation rows, metric and moving average
        training |= {k: v for k, v in task.training.items() if k in ("eval_every", "val_metric")}
        training["ema_decay"] = start_config(training, False, model, task.pick(tr))[0].ema_decay  # the RLM's rule
    head = make_baseline("regression_head_norm", **text_options(task, kind), model=model, training=training)
    if args.head_validation:
        head.fit(task.pick(tr), task.targets[tr], val_texts=task.pick(va), val_targets=task.targets[va])
        return task.spearman(head.predict(task.pick(te)), te) | {"best_step": head.fit_report_["best_step"]}
    seen = np.concatenate([tr, va])
    head.fit(task.pick(seen), task.targets[seen])
    return task.spearman(head.predict(task.pick(te)), te)


def read_results(path: Path) -> list[dict]:
    """The rows of an earlier run's ``--json`` file; a missing or foreign file stops with its name."""
    if not path.is_file():
        raise SystemExit(f"--summarize: {path}: not found")
    try:
        return json.loads(path.read_text())["results"]
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise SystemExit(f"--summarize: {path}: not a --json file of this bench ({error})") from None


def summary(rows: list[dict], columns: list[str]) -> list[dict]:
    """Mean and spread (std over seeds) per (data, method, variant, point, train); "-" for an objective
    the group's dataset does not have (``--summarize`` of cell-string and ONNX runs together)."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        encoder = row.get("encoder", "scratch")
        key = (row.get("data"), row["method"], encoder, row["variant"], row.get("point", "median"), row["train"])
        groups.setdefault(key, []).append(row)
    out = []
    for (_, method, encoder, variant, point, train), group in groups.items():
        entry = {"method": method, "encoder": encoder, "variant": variant, "point": point, "train": train}
        entry["seeds"] = len(group)
        for name in columns:
            values = [g[name] for g in group if name in g]
            entry[name] = f"{np.mean(values):.3f} ± {np.std(values):.3f}" if values else "-"
        out.append(entry)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="nasbench201.csv, or a collected ONNX dataset")
    parser.add_argument("--objectives", default="", help="comma-separated (default: all; cell strings: e.g. cpu)")
    parser.add_argument(
        "--synthetic",
        choices=sorted(SETS),
        help="cell strings: two synthetic costs (bench/synthetic_cells.py) instead of NB201's objectives",
    )
    parser.add_argument("--test", type=int, default=200, help="with a .jsonl dataset: test rows")
    parser.add_argument("--train", default="200,1800", help="training-set sizes (validation included)")
    parser.add_argument("--seeds", default="0,1", help="training seeds")
    parser.add_argument("--variants", default="default", help="';'-separated RLM variants (see above)")
    parser.add_argument("--head", action=argparse.BooleanOptionalAction, default=True, help="the regression head")
    parser.add_argument("--steps", type=int, default=1500, help="training steps of every model")
    parser.add_argument("--batch-size", type=int, default=0, help="default: 32 (cell strings), 16 (ONNX)")
    parser.add_argument("--samples", type=int, default=64, help="samples per test input")
    parser.add_argument("--encoders", default="scratch", help="scratch, FOLDER, untrained:FOLDER (comma-separated)")
    parser.add_argument(
        "--init-learning-rate", type=float, default=3e-4, help="learning rate from a pretrained encoder"
    )
    parser.add_argument(
        "--head-learning-rate", type=float, help="the scratch regression head's (default: the library's, 1e-3)"
    )
    parser.add_argument(
        "--head-augment", type=int, default=0, help="the head's training option augment (rewritten copies of each text)"
    )
    parser.add_argument(
        "--head-validation",
        action="store_true",
        help="the head selects its weights as the RLM does (validation rows, val_metric, moving average)",
    )
    parser.add_argument("--json", type=Path, help="write {'results': [...]} here")
    parser.add_argument("--summarize", type=Path, nargs="+", help="print the tables of these runs' --json files")
    args = parser.parse_args()
    if args.summarize:
        print_tables([row for path in args.summarize for row in read_results(path)])
        return
    if not args.data.is_file():
        raise SystemExit(f"{args.data}: not found (pass --data path/to/nasbench201.csv or a .jsonl dataset)")
    variants = {spec: parse_variant(spec) for spec in args.variants.split(";") if spec}
    families = {e: encoder_family(e) for e in args.encoders.split(",") if e}  # spec -> (kind, folder)
    for encoder, (kind, _) in families.items():
        if kind not in ("scratch", "pretrained", "untrained"):
            raise SystemExit(f"--encoders: {encoder!r} is not scratch, a pretrained encoder folder or untrained:FOLDER")
    task = onnx_task(args.data, args) if args.data.suffix == ".jsonl" else cell_task(args.data, args)
    data = args.data.name + (f" (synthetic {args.synthetic})" if args.synthetic else "")
    rows = []
    for train in [int(n) for n in args.train.split(",")]:
        split = task.parts(train)
        for seed in [int(s) for s in args.seeds.split(",")]:
            jobs = [("rlm", e, spec) for e in families for spec in variants]
            if args.head:  # on every encoder but the untrained control
                for e, (kind, _) in families.items():
                    if kind != "untrained":  # the head on a pretrained encoder trains at --init-learning-rate
                        rate = args.head_learning_rate if kind == "scratch" else None
                        spec = "+".join(
                            ([f"learning_rate={rate}"] if rate else [])
                            + ([f"augment={args.head_augment}"] if args.head_augment else [])
                            + (["validation"] if args.head_validation else [])
                        )
                        jobs.append(("regression_head_norm", e, spec))
            for method, encoder, spec in jobs:
                started = f"{method} {encoder} {spec or 'default'!r}: train {train}, seed {seed}"
                print(started, file=sys.stderr, flush=True)
                start = time.perf_counter()
                if method == "rlm":
                    by_point = run_rlm(args, task, variants[spec], split, seed, families[encoder])
                else:
                    by_point = {"": run_head(args, task, split, seed, families[encoder])}
                seconds = {"train_s": round(time.perf_counter() - start, 1)}
                for point, scores in by_point.items():
                    row = {"method": method, "encoder": encoder, "variant": spec, "point": point, "train": train}
                    row["seed"] = seed
                    rows.append(row | {"data": data, "steps": args.steps} | scores | seconds)
                    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
                if args.json:  # after every row: a long run keeps what it measured
                    args.json.parent.mkdir(parents=True, exist_ok=True)
                    args.json.write_text(json.dumps({"results": rows}, indent=1))
    print_tables(rows)


def print_tables(rows: list[dict]) -> None:
    fixed = {"method", "encoder", "variant", "point", "train", "seed", "data", "steps", "best_step", "train_s"}
    fixed |= {"learning_rate"}
    scores = [key for key in dict.fromkeys(k for r in rows for k in r) if key not in fixed]
    head = ["method", "encoder", "variant", "point", "train"]
    rate = ["learning_rate"] if any("learning_rate" in r for r in rows) else []
    print(markdown_table(rows, [*head, "seed", *scores, "best_step", *rate, "train_s"]))
    print()
    print(markdown_table(summary(rows, scores), [*head, "seeds", *scores]))


if __name__ == "__main__":
    main()
