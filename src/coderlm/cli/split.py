"""``coderlm split``: a dataset file -> one file per split and split.json (seed, fractions, counts)."""

from __future__ import annotations

import argparse
import json

from coderlm.cli.flags import csv_list
from coderlm.data import split_dataset


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "split",
        help="split a dataset into train/val/test files",
        description="Writes one file per split and split.json (seed, fractions, counts).",
    )
    p.add_argument("--data", required=True, help="dataset to split (.jsonl or .parquet)")
    p.add_argument("--out", required=True, help="folder for the split files")
    p.add_argument(
        "--fractions",
        type=fractions,
        default={"train": 0.8, "val": 0.1, "test": 0.1},
        help="name=fraction pairs (default train=0.8,val=0.1,test=0.1)",
    )
    p.add_argument("--by-group", action="store_true", help="keep each group (e.g. problem id) in one split")
    p.add_argument("--seed", type=int, default=0, help="shuffle seed (default 0)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    paths = split_dataset(args.data, args.out, args.fractions, seed=args.seed, by_group=args.by_group)
    print(json.dumps({name: str(path) for name, path in paths.items()}))
    return 0


def fractions(value: str) -> dict[str, float]:
    """``train=0.8,test=0.2`` -> ``{"train": 0.8, "test": 0.2}`` (a flag's type)."""
    try:
        pairs = [item.split("=", 1) for item in csv_list(value)]
        return {name.strip(): float(fraction) for name, fraction in pairs}
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"expected name=fraction pairs like train=0.8,test=0.2, got {value!r}"
        ) from exc
