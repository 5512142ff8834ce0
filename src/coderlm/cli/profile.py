"""``coderlm profile``: run one program in the sandbox; print its memory and runtime as one JSON object.

Python: the program's dynamic heap peak (tracemalloc, after compiling it) and median in-process
runtime, each in a fresh ``python3 -I -S -B``. Other languages (a runner in runners.toml): compile
once, then the median peak RSS and wall time of the run step.
"""

from __future__ import annotations

import argparse
import json

from coderlm.cli.flags import require_file
from coderlm.collect.programs.collect import Protocol
from coderlm.collect.programs.python_profiler import profile_python
from coderlm.collect.programs.runners import get_runner, language_of, load_runners, profile_program


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "profile",
        help="run one program in the sandbox; print its memory and runtime as JSON",
        description=__doc__.split("\n\n", 1)[1],
    )
    p.add_argument("file", help="the program")
    p.add_argument("--language", help="language (default: from the file's suffix, as runners.toml lists them)")
    p.add_argument("--stdin", help="file given to the program as standard input")
    p.add_argument("--tests", help="Python only: a file of test statements; FILE is then definitions only")
    p.add_argument("--runners", help="TOML runner table adding to or replacing the shipped one")
    add_protocol_flags(p)
    p.set_defaults(run=run)


def add_protocol_flags(p: argparse.ArgumentParser) -> None:
    """How each program is measured (``Protocol``); shared with ``coderlm collect programs``."""
    default = Protocol()
    p.add_argument(
        "--repeats",
        type=int,
        default=default.repeats,
        help=f"measured runs; runtime = their median (default {default.repeats})",
    )
    p.add_argument(
        "--warmups", type=int, default=default.warmups, help=f"discarded runs before them (default {default.warmups})"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=default.timeout_s,
        help=f"seconds per run before the process group is killed (default {default.timeout_s})",
    )


def run(args: argparse.Namespace) -> int:
    path = require_file(args.file, "FILE")
    runners = load_runners(args.runners)
    language = args.language or language_of(path, runners)
    if language is None:
        raise ValueError(f"cannot tell the language of {path.name}; pass --language")
    runner = get_runner(language, runners)
    stdin = require_file(args.stdin, "--stdin").read_text() if args.stdin else None
    if args.tests and language != "python":
        raise ValueError("--tests is for Python programs only")
    options = {"repeats": args.repeats, "warmups": args.warmups, "timeout_s": args.timeout}
    if language == "python":
        code, tests = path.read_text(), ""
        if args.tests:
            tests = require_file(args.tests, "--tests").read_text()
        else:
            code, tests = "", code  # a whole script: trace all of it (compiled first)
        record = profile_python(code, tests, stdin=stdin, **options)
    else:
        record = profile_program(path.read_text(), runner, stdin=stdin, **options)
        if record["status"] == "unavailable":
            raise ValueError(f"{language}: {record['stderr_tail']}")
    print(json.dumps({"file": str(path), **record}))
    return 0
