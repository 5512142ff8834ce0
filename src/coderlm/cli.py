"""``coderlm``: subcommands only. Parse, call the library, print.

Bad input (a malformed dataset row, an unknown option, a missing file) prints one
line ``coderlm: error: ...`` and exits with status 2.
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from coderlm.cli_options import ConfigError, add_dataclass_flags, load_yaml_config, merge_options
from coderlm.cli_programs import add_collect_programs, add_profile
from coderlm.model.config import DERIVED_FIELDS, ModelConfig
from coderlm.numbers.codec import SPECIAL_TOKENS
from coderlm.training.config import TrainConfig

TRAIN_TOP_LEVEL = [
    "data",
    "val",
    "out",
    "init",
    "objectives",
    "missing",
    "resume",
    "specials",
    "number_format",
    "mantissa_digits",
    "min_exponent",
    "max_exponent",
    "exponent_digits",
    "vocab_size",
    "pretokenize",
    "max_input_len",
    "num_samples",
    "temperature",
    "batch_size_predict",
    "device",
]


# ------------------------------------------------------------------------- train
def add_train(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train",
        help="train a model on a dataset file (JSONL or Parquet)",
        description="Train a RegressionLM. The run folder gets metrics.jsonl, checkpoints/ and, "
        "at the end, the model (config.json, model.safetensors, tokenizer.json).",
    )
    p.add_argument("--config", help="YAML file with any of these options (flags given here win)")
    p.add_argument("--data", help="training dataset (.jsonl or .parquet)")
    p.add_argument("--val", help="validation dataset: loss curve, early stopping, best-weights restore")
    p.add_argument("--out", help="run folder")
    p.add_argument("--objectives", type=_csv, help="target names to predict, in order (default: all, sorted)")
    p.add_argument(
        "--missing",
        choices=["skip", "mask", "special"],
        help="rows missing a target: skip them (default), mask them out of the loss, or learn a <NaN> token",
    )
    p.add_argument("--resume", action="store_true", default=None, help="continue the run in --out")
    p.add_argument(
        "--init",
        help="fine-tune: start from this trained model or finished run folder (its tokenizer "
        "and architecture; new objectives allowed; learning rate 5e-5 unless --learning-rate)",
    )
    p.add_argument("--specials", type=_csv, help=f"special values to learn as tokens: {list(SPECIAL_TOKENS)}")
    g = p.add_argument_group("number format")
    g.add_argument("--number-format", choices=["p10", "ieee"], help="how numbers are spelled (default: p10)")
    g.add_argument("--mantissa-digits", type=int, help="mantissa digits (default 4)")
    g.add_argument("--min-exponent", type=int, help="P10 smallest exponent (default -10)")
    g.add_argument("--max-exponent", type=int, help="P10 largest exponent (default 10)")
    g.add_argument("--exponent-digits", type=int, help="IEEE exponent digits (default 1)")
    g = p.add_argument_group("estimator")
    g.add_argument("--vocab-size", type=int, help="input BPE vocabulary learned from the data (default 4096)")
    g.add_argument(
        "--pretokenize",
        choices=["code", "lines", "structure", "plain"],
        help="BPE merge boundaries: code (default) or lines (shorter for ONNX text); with a "
        "pretrained --encoder: code (newline/indent markers if its tokenizer drops them), structure "
        "or plain",
    )
    g.add_argument("--max-input-len", type=int, help="encoder context in tokens; longer inputs truncated (512)")
    g.add_argument("--num-samples", type=int, help="samples per prediction (default 64)")
    g.add_argument("--temperature", type=float, help="sampling temperature; 0 = greedy (default 1)")
    g.add_argument("--batch-size-predict", type=int, help="inputs per forward pass when predicting (default 16)")
    g.add_argument("--device", help="cpu, cuda or auto (default cpu)")
    add_dataclass_flags(p, ModelConfig, skip=set(DERIVED_FIELDS), title="model")
    add_dataclass_flags(p, TrainConfig, title="training")
    p.set_defaults(run=run_train)


def run_train(args: argparse.Namespace) -> int:
    from coderlm.workflows import train_run

    config = load_yaml_config(args.config) if args.config else {}
    sections = {"model": _fields(ModelConfig) - set(DERIVED_FIELDS), "training": _fields(TrainConfig)}
    opts = merge_options(
        args, config, {k: sorted(v) for k, v in sections.items()}, TRAIN_TOP_LEVEL, args.config or "command line"
    )
    for required in ("data", "out"):
        if not opts.get(required):
            raise ConfigError(f"--{required} is required (on the command line or in --config)")
    number = {"kind": opts["number_format"]} if "number_format" in opts else {}  # none given: default or --init's
    number |= {k: opts[k] for k in ("mantissa_digits", "min_exponent", "max_exponent", "exponent_digits") if k in opts}
    estimator = {
        k: opts[k]
        for k in ("vocab_size", "pretokenize", "max_input_len", "num_samples", "temperature", "device")
        if k in opts
    }
    if "batch_size_predict" in opts:
        estimator["batch_size"] = opts["batch_size_predict"]
    rlm = train_run(
        opts["data"],
        opts["out"],
        val=opts.get("val"),
        objectives=opts.get("objectives"),
        missing=opts.get("missing", "skip"),
        number=number,
        specials=opts.get("specials") or (),
        model=opts["model"],
        training=opts["training"],
        estimator=estimator,
        resume=bool(opts.get("resume")),
        init=opts.get("init"),
    )
    if os.environ.get("RANK", "0") == "0":  # under torchrun, one summary
        print(json.dumps({"run": str(opts["out"]), "objectives": rlm.objectives_, **rlm.fit_report_}))
    return 0


# ----------------------------------------------------------------------- predict
def add_predict(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "predict",
        help="predict for input files, a dataset, or stdin",
        description="Each INPUT is a text file (one input), an .onnx model (serialized as "
        "coderlm collect does), a .jsonl/.parquet dataset (one input per row), or - for stdin. "
        "Prints one record per input.",
    )
    p.add_argument(
        "--model",
        required=True,
        action="append",
        help="run folder or saved model; repeat it to pool several models' samples",
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT")
    p.add_argument("--level", type=float, default=0.9, help="central interval level (default 0.9)")
    p.add_argument("--num-samples", type=int, help="samples per input (default: the model's, 64)")
    p.add_argument("--all-samples", action="store_true", help="also print every sample")
    p.add_argument("--output", choices=["json", "csv"], default="json", help="JSON lines (default) or CSV")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    p.add_argument(
        "--onnx-style",
        choices=["compact", "minimal", "onnx"],
        default="compact",
        help="how .onnx inputs become text; use the style the training data was collected with",
    )
    p.set_defaults(run=run_predict)


def run_predict(args: argparse.Namespace) -> int:
    from coderlm.ensemble import load_models
    from coderlm.workflows import predict_records, read_inputs

    models = load_models(args.model)
    inputs = read_inputs(args.inputs, args.onnx_style)
    records = predict_records(models, inputs, args.level, args.num_samples, args.all_samples, args.seed)
    if args.output == "json":
        for record in records:
            print(json.dumps(record))
    else:
        writer = csv.DictWriter(sys.stdout, fieldnames=list(records[0]))
        writer.writeheader()
        for record in records:
            writer.writerow({k: " ".join(map(str, v)) if isinstance(v, list) else v for k, v in record.items()})
    return 0


# ---------------------------------------------------------------------- evaluate
def add_evaluate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="evaluate a model on a test set; write a report",
        description="Spearman, Kendall, Pearson, MAE, MAPE per task and objective; interval "
        "coverage; per-group ranking; scatter plots; report.md and metrics.json.",
    )
    p.add_argument(
        "--model",
        required=True,
        action="append",
        help="run folder or saved model; repeat it to pool several models' samples",
    )
    p.add_argument("--data", required=True, help="test dataset (.jsonl or .parquet)")
    p.add_argument("--report", required=True, help="folder for report.md, metrics.json and plots")
    p.add_argument("--num-samples", type=int, help="samples per input (default: the model's, 64)")
    p.add_argument(
        "--baselines",
        type=_csv,
        default=[],
        help="also train and evaluate these baselines on --train-data: "
        "regression_head_norm, regression_head_raw, gbdt, knn, length",
    )
    p.add_argument("--train-data", help="training set for --baselines (the one the model was trained on)")
    p.set_defaults(run=run_evaluate)


def run_evaluate(args: argparse.Namespace) -> int:
    from coderlm.workflows import evaluate_run

    evaluate_run(
        args.model,
        args.data,
        args.report,
        num_samples=args.num_samples,
        baselines=args.baselines,
        train_data=args.train_data,
    )
    print(f"report: {Path(args.report) / 'report.md'}")
    return 0


# ------------------------------------------------------------------------- split
def add_split(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "split",
        help="split a dataset into train/val/test files",
        description="Writes one file per split and split.json (seed, fractions, counts).",
    )
    p.add_argument("--data", required=True, help="dataset to split (.jsonl or .parquet)")
    p.add_argument("--out", required=True, help="folder for the split files")
    p.add_argument(
        "--fractions",
        type=_fractions,
        default={"train": 0.8, "val": 0.1, "test": 0.1},
        help="name=fraction pairs (default train=0.8,val=0.1,test=0.1)",
    )
    p.add_argument("--by-group", action="store_true", help="keep each group (e.g. problem id) in one split")
    p.add_argument("--seed", type=int, default=0, help="shuffle seed (default 0)")
    p.set_defaults(run=run_split)


def run_split(args: argparse.Namespace) -> int:
    from coderlm.data import split_dataset

    paths = split_dataset(args.data, args.out, args.fractions, seed=args.seed, by_group=args.by_group)
    print(json.dumps({name: str(path) for name, path in paths.items()}))
    return 0


# ----------------------------------------------------------------------- collect
def add_collect(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("collect", help="build labelled datasets by running things")
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    nas = kinds.add_parser(
        "nas",
        help="NAS-Bench-201 networks as ONNX text, with FLOPs, params, CPU latency",
        description="Samples cells, builds each network in PyTorch, exports it to ONNX, "
        "serializes it as text and labels it. Resumable: rerun the same command.",
    )
    nas.add_argument("--space", choices=["nb201"], default="nb201", help="search space (default nb201)")
    nas.add_argument("--count", type=int, default=200, help="networks to collect (default 200; 0 = all 15,625)")
    nas.add_argument(
        "--labels",
        type=_csv,
        default=["flops", "params", "latency_cpu"],
        help="comma-separated from flops, macs, params, latency_cpu (default flops,params,latency_cpu)",
    )
    nas.add_argument("--out", required=True, help="dataset file (.jsonl) or folder (gets nb201.jsonl)")
    nas.add_argument("--join", help="nasbench201.csv: add its accuracies and 27 device latencies as targets")
    nas.add_argument("--seed", type=int, default=0, help="which cells, in which order (default 0)")
    nas.add_argument("--cells", help="file with one cell string per line: collect exactly these (not --count)")
    nas.add_argument("--workers", type=int, default=1, help="export processes (>1 adds noise to latency)")
    nas.add_argument("--cells-per-stage", type=int, default=5, help="cells per stage of the skeleton (default 5)")
    nas.add_argument(
        "--text-style",
        choices=["compact", "minimal", "onnx"],
        default="compact",
        help="ONNX text style (docs/onnx_text.md)",
    )
    nas.add_argument("--latency-threads", type=int, default=1, help="onnxruntime threads (default 1)")
    nas.add_argument("--batch-size", type=int, default=1, help="batch size for export and latency (default 1)")
    nas.add_argument("--no-progress", action="store_true", help="no progress bar")
    nas.set_defaults(run=run_collect_nas)
    add_collect_programs(kinds)


def run_collect_nas(args: argparse.Namespace) -> int:
    from coderlm.collect.nets.collect import collect_nas

    cells = None
    if args.cells:
        path = Path(args.cells)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file (--cells)")
        cells = [line.strip() for line in path.read_text().splitlines() if line.strip()]
        if not cells:
            raise ValueError(f"{path}: no cell strings (--cells)")
    report = collect_nas(
        args.out,
        args.count or None,
        args.labels,
        seed=args.seed,
        workers=args.workers,
        cells_per_stage=args.cells_per_stage,
        text_style=args.text_style,
        latency_threads=args.latency_threads,
        batch_size=args.batch_size,
        join_csv=args.join,
        cells=cells,
        progress=not args.no_progress,
    )
    print(
        json.dumps(
            {
                "dataset": str(report.path),
                "requested": report.requested,
                "already_done": report.already_done,
                "collected": report.collected,
            }
        )
    )
    return 0


# -------------------------------------------------------------------- quickstart
def add_quickstart(sub: argparse._SubParsersAction) -> None:
    from coderlm import quickstart

    p = sub.add_parser(
        "quickstart",
        help="collect real networks, train, evaluate vs baselines, predict (minutes)",
        description=quickstart.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_dataclass_flags(p, quickstart.QuickstartConfig, title="options (all optional)")
    p.set_defaults(run=run_quickstart)


def run_quickstart(args: argparse.Namespace) -> int:
    import dataclasses

    from coderlm.quickstart import QuickstartConfig, run_quickstart

    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(QuickstartConfig)}
    run_quickstart(QuickstartConfig(**{k: v for k, v in given.items() if v is not None}))
    return 0


# ------------------------------------------------------------------------- main
COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_train,
    add_predict,
    add_evaluate,
    add_split,
    add_collect,
    add_quickstart,
    add_profile,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="coderlm", description="Predict what code costs before it runs.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="coderlm: %(message)s")
    code = _run_reporting_errors(args)
    from coderlm.training.distributed import exit_process, shutdown_distributed

    if shutdown_distributed():  # under torchrun: every rank leaves the group together, then exits
        exit_process(code)
    return code


def _run_reporting_errors(args: argparse.Namespace) -> int:
    try:
        return args.run(args)
    except (ValueError, FileNotFoundError, NotADirectoryError, IsADirectoryError) as exc:
        if args.verbose:
            raise
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"coderlm: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("coderlm: interrupted", file=sys.stderr)
        return 130


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _fractions(value: str) -> dict[str, float]:
    try:
        pairs = [item.split("=", 1) for item in _csv(value)]
        return {name.strip(): float(fraction) for name, fraction in pairs}
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"expected name=fraction pairs like train=0.8,test=0.2, got {value!r}"
        ) from exc


def _fields(cls: type) -> set[str]:
    import dataclasses

    return {f.name for f in dataclasses.fields(cls)}


if __name__ == "__main__":
    sys.exit(main())
