"""The command table, the parser, and how errors reach the user.

Bad input (a malformed dataset row, an unknown option, a missing file) prints one line
``coderlm: error: ...`` and exits with status 2; an error naming a library parameter
(``OptionError``) names the command's flag instead.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from coderlm.cli import (
    calibrate,
    collect,
    evaluate,
    predict,
    pretrain,
    profile,
    quickstart,
    readout,
    serve,
    split,
    train,
)
from coderlm.options import OptionError
from coderlm.training.distributed import exit_process, shutdown_distributed

# Each module's ``add(subparsers)`` registers its command(s) with ``set_defaults(run=...)``.
COMMANDS = [train, pretrain, readout, predict, evaluate, calibrate, split, collect, quickstart, profile, serve]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="coderlm", description="Predict what code costs before it runs.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add(sub)
    _remember_flags(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="coderlm: %(message)s")
    code = _run_reporting_errors(args)
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
        if isinstance(exc, OptionError) and exc.option in args.flags:
            message = f"{args.flags[exc.option]} {exc.message}"
        print(f"coderlm: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("coderlm: interrupted", file=sys.stderr)
        return 130


def _remember_flags(parser: argparse.ArgumentParser) -> None:
    """Give every (sub)command ``args.flags``: option name -> its flag, for error messages."""

    def flag(action: argparse.Action) -> str:  # the longest spelling, "--x" before "--no-x"
        return max(action.option_strings, key=lambda s: (not s.startswith("--no-"), len(s)))

    flags = {a.dest: flag(a) for a in parser._actions if a.option_strings and a.dest != "help"}
    parser.set_defaults(flags=flags)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for subparser in dict.fromkeys(action.choices.values()):
                _remember_flags(subparser)
