"""``coderlm train``: a dataset file -> a run folder that is a loadable model.

Flags come from where the options are declared: ``RegressionLM``'s signature and docstring
(estimator), ``ModelConfig`` and ``TrainConfig`` fields and their comments (model, training),
the number formats' fields. ``--config FILE`` (YAML) holds the same names; flags given win.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from coderlm.atomic import write_atomic
from coderlm.cli.flags import (
    add_flags,
    command_options,
    csv_list,
    dataclass_options,
    signature_options,
)
from coderlm.data import MISSING_POLICIES, DatasetError, read_dataset
from coderlm.estimator import RegressionLM
from coderlm.model.config import DERIVED_FIELDS, ModelConfig
from coderlm.numbers.codec import SPECIAL_TOKENS
from coderlm.numbers.formats import IEEE, P10, NumberFormat, format_from_dict
from coderlm.training.config import TrainConfig

log = logging.getLogger("coderlm")

# RegressionLM's own options as flags; its batch_size (prediction) would clash with training's.
ESTIMATOR_FLAGS = signature_options(
    RegressionLM, skip=("number_format", "specials", "model", "training"), rename={"batch_size": "batch_size_predict"}
)
MODEL_FLAGS = dataclass_options(ModelConfig, skip=DERIVED_FIELDS)
TRAINING_FLAGS = dataclass_options(TrainConfig)
# --mantissa-digits sets P10's digits or IEEE's mantissa_digits; the others belong to one format
NUMBER_FIELDS = {
    "p10": {"mantissa_digits": "digits", "min_exponent": "min_exponent", "max_exponent": "max_exponent"},
    "ieee": {"mantissa_digits": "mantissa_digits", "exponent_digits": "exponent_digits"},
}


def add(sub: argparse._SubParsersAction) -> None:
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
    p.add_argument("--objectives", type=csv_list, help="target names to predict, in order (default: all, sorted)")
    p.add_argument(
        "--missing",
        choices=MISSING_POLICIES,
        help="rows missing a target: auto (default: a <NaN> token where the row's task has that objective in no "
        "row, as in a multi-task dataset, else skip the row), skip them, mask them out of the loss, learn a <NaN> "
        "token (special), or stop with an error naming the row",
    )
    p.add_argument("--resume", action="store_true", default=None, help="continue the run in --out")
    p.add_argument(
        "--init",
        help="fine-tune: start from this trained model or finished run folder (its tokenizer and architecture; "
        "new objectives allowed; learning rate 5e-5 unless --learning-rate), or from a pretrained encoder "
        "folder (coderlm pretrain's, builtin:python-encoder: its tokenizer and encoder under a new number decoder; "
        "learning rate 3e-4 unless --learning-rate)",
    )
    p.add_argument(
        "--context",
        help="with --init: 'init' writes the init model's objectives first, filled with its own predictions (not "
        "learned), and starts each new objective from the one that ranks it best (a new device from a known one); "
        "or objective names of the data to give as context only",
    )
    p.add_argument("--specials", type=csv_list, help=f"special values to learn as tokens: {list(SPECIAL_TOKENS)}")
    g = p.add_argument_group("number format")
    g.add_argument("--number-format", choices=sorted(NUMBER_FIELDS), help="how numbers are spelled (default: p10)")
    g.add_argument("--mantissa-digits", type=int, help=f"mantissa digits (default {P10().digits})")
    g.add_argument("--min-exponent", type=int, help=f"P10 smallest exponent (default {P10().min_exponent})")
    g.add_argument("--max-exponent", type=int, help=f"P10 largest exponent (default {P10().max_exponent})")
    g.add_argument("--exponent-digits", type=int, help=f"IEEE exponent digits (default {IEEE().exponent_digits})")
    add_flags(p, ESTIMATOR_FLAGS, "estimator")
    add_flags(p, MODEL_FLAGS, "model")
    add_flags(p, TRAINING_FLAGS, "training")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    sections = {"model": [o.name for o in MODEL_FLAGS], "training": [o.name for o in TRAINING_FLAGS]}
    opts = command_options(args, sections, required=("data", "out"))
    number = {
        k: opts[k]
        for k in ("number_format", "mantissa_digits", "min_exponent", "max_exponent", "exponent_digits")
        if k in opts
    }
    estimator = {o.name: opts[o.flag or o.name] for o in ESTIMATOR_FLAGS if (o.flag or o.name) in opts}
    rlm = train_run(
        opts["data"],
        opts["out"],
        val=opts.get("val"),
        objectives=opts.get("objectives"),
        missing=opts.get("missing", "auto"),
        number=number,
        specials=opts.get("specials") or (),
        model=opts["model"],
        training=opts["training"],
        estimator=estimator,
        resume=bool(opts.get("resume")),
        init=opts.get("init"),
        context=opts.get("context") or (),
    )
    if os.environ.get("RANK", "0") == "0":  # under torchrun, one summary
        print(json.dumps({"run": str(opts["out"]), "objectives": rlm.objectives_, **rlm.fit_report_}))
    return 0


def number_format(number_format: str = "p10", **options: Any) -> NumberFormat:
    """A number format from its kind and the command line's (relevant) options; others raise."""
    if number_format not in NUMBER_FIELDS:
        raise ValueError(f"number format must be 'p10' or 'ieee', got {number_format!r}")
    fields = NUMBER_FIELDS[number_format]
    given = {k: v for k, v in options.items() if v is not None}
    wrong = sorted(set(given) - set(fields))
    if wrong:
        raise ValueError(f"option(s) {wrong} do not apply to the {number_format} number format")
    return format_from_dict({"kind": number_format, **{fields[k]: v for k, v in given.items()}})


def train_run(
    data: str | Path,
    out: str | Path,
    *,
    val: str | Path | None = None,
    objectives: Sequence[str] | None = None,
    missing: str = "auto",
    number: dict[str, Any] | None = None,
    specials: Sequence[str] = (),
    model: dict[str, Any] | None = None,
    training: dict[str, Any] | None = None,
    estimator: dict[str, Any] | None = None,
    resume: bool = False,
    init: str | Path | None = None,
    context: str | Sequence[str] = (),
) -> RegressionLM:
    """Train a RegressionLM on dataset file ``data``; the run folder ``out`` becomes a loadable model
    (plus ``train_summary.json``). ``missing``: see ``coderlm.data.MISSING_POLICIES``; ``init``: a
    trained model or finished run folder to fine-tune from; ``context``: ``"init"`` or objectives given as
    context only (``RegressionLM.fit``); ``estimator``: ``RegressionLM`` options."""
    arrays = read_dataset(data).to_arrays(objectives, missing)
    if len(arrays) == 0:
        raise DatasetError(data, f"no rows left for training after skipping {arrays.skipped} with missing targets")
    if arrays.skipped:
        log.warning(
            "%s: skipped %d row(s) with missing targets (use --missing mask to keep them)", data, arrays.skipped
        )
    val_missing = "skip" if arrays.missing == "skip" else missing  # "auto": as it resolved for training
    val_arrays = read_dataset(val).to_arrays(arrays.objectives, val_missing) if val is not None else None
    fmt = number_format(**(number or {})) if number or init is None else None  # None: fine-tuning keeps init's format
    try:
        rlm = RegressionLM(
            fmt, specials=tuple(specials), model=model or None, training=training or None, **(estimator or {})
        )
    except TypeError as exc:  # an option RegressionLM does not take
        raise ValueError(f"unknown option: {exc}") from None
    out = Path(out)
    if not resume and (out / "checkpoints").exists():
        raise ValueError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    rlm.fit(
        arrays.texts,
        arrays.targets,
        missing="error" if arrays.missing == "skip" else arrays.missing,  # skipped above, where the file is named
        tasks=arrays.tasks,
        objectives=arrays.objectives,
        val_texts=val_arrays.texts if val_arrays is not None else None,
        val_targets=val_arrays.targets if val_arrays is not None else None,
        val_tasks=val_arrays.tasks if val_arrays is not None else None,
        run_dir=out,
        resume=resume,
        init=init,
        context=context if context == "init" else (csv_list(context) if isinstance(context, str) else context),
    )
    record = {
        "data": str(data),
        "val": str(val) if val else None,
        "init": str(init) if init else None,
        "context": context if isinstance(context, str) else list(context),
        "objectives": rlm.objectives_,
        "missing": missing,
        "missing_applied": arrays.missing,  # "auto" resolved to "special" or "skip"
        "skipped": arrays.skipped,
        "fit_report": rlm.fit_report_,
    }
    write_atomic(out / "train_summary.json", json.dumps(record, indent=2) + "\n")
    return rlm
