"""``coderlm pretrain``: unlabelled text -> an encoder folder that ``coderlm train`` starts from.

Flags come from where the options are declared: ``PretrainConfig`` (encoder size, tokenizer,
masking) and ``TrainConfig`` (steps, batch size, learning rate, ...; pretraining's own defaults
from ``pretraining.config.TRAINING_DEFAULTS``). ``--config FILE`` (YAML) holds the same names.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os

from coderlm.cli.flags import add_flags, command_options, dataclass_options
from coderlm.devices import resolve_device
from coderlm.pretraining import PretrainConfig, pretrain
from coderlm.pretraining.config import TRAINING_DEFAULTS, TRAINING_SKIPPED
from coderlm.training.config import TrainConfig

PRETRAIN_FLAGS = dataclass_options(PretrainConfig)
TRAINING_FLAGS = [
    dataclasses.replace(o, default=TRAINING_DEFAULTS.get(o.name, o.default))
    for o in dataclass_options(TrainConfig, skip=TRAINING_SKIPPED)
]


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "pretrain",
        help="pretrain an encoder on unlabelled code or graph text",
        description="Masked-span denoising of an encoder over raw text (datasets' text fields, JSONL files "
        "of code, source folders). The run folder gets metrics.jsonl, checkpoints/ and, at the end, a "
        "Hugging Face model folder: use it with 'coderlm train --init FOLDER' (fine-tuned under a new "
        "number decoder) or '--encoder FOLDER' (frozen; add --encoder-cache memory).",
    )
    p.add_argument("--config", help="YAML file with any of these options (flags given here win)")
    p.add_argument(
        "--data",
        action="append",
        help="a dataset (.jsonl, .jsonl.gz, .parquet: its text field), a folder of source files, or a text "
        "file; repeat for several",
    )
    p.add_argument("--out", help="run folder, then the encoder's folder")
    p.add_argument("--resume", action="store_true", default=None, help="continue the run in --out")
    p.add_argument("--device", help="cpu, cuda, cuda:N (default cpu)")
    add_flags(p, PRETRAIN_FLAGS, "pretraining")
    add_flags(p, TRAINING_FLAGS, "training")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    sections = {"pretrain": [o.name for o in PRETRAIN_FLAGS], "training": [o.name for o in TRAINING_FLAGS]}
    opts = command_options(args, sections, required=("data", "out"))
    data = opts["data"] if isinstance(opts["data"], list) else [opts["data"]]
    result = pretrain(
        data,
        opts["out"],
        config=opts["pretrain"],
        training=opts["training"],
        resume=bool(opts.get("resume")),
        device=resolve_device(opts.get("device") or "cpu"),
    )
    if os.environ.get("RANK", "0") == "0":
        record, corpus = result.record, result.record["corpus"]
        summary = {"documents": corpus["documents"], "tokens": corpus["tokens"], "seconds": record["seconds"]}
        print(json.dumps({"encoder": str(result.folder), **summary, **record["result"]}))
    return 0
