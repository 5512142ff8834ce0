"""``coderlm profile`` and ``coderlm collect programs``: argument parsing for the program profiler.

Kept apart from ``cli.py`` (which only registers these two): parse, call ``coderlm.collect``, print.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from coderlm.collect.programs.collect import TEXT_MODES
from coderlm.collect.programs.corpora import CORPORA

EXTENSIONS = {
    ".py": "python",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cxx": "cpp",
    ".java": "java",
    ".js": "javascript",
    ".ts": "typescript",
    ".pl": "perl",
    ".go": "go",
    ".cs": "csharp",
    ".kt": "kotlin",
    ".scala": "scala",
    ".swift": "swift",
}


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _add_protocol(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repeats", type=int, default=11, help="measured runs; runtime = their median (default 11)")
    p.add_argument("--warmups", type=int, default=3, help="discarded runs before them (default 3)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per run before the process group is killed")


# ----------------------------------------------------------------------- profile
def add_profile(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "profile",
        help="run one program in the sandbox; print its memory and runtime as JSON",
        description="Python: dynamic heap peak of the program (tracemalloc, after compiling it) and "
        "median in-process runtime, each in a fresh python3 -I -S -B. Other languages: compile once, "
        "then median peak RSS and wall time of the run step. Prints one JSON object.",
    )
    p.add_argument("file", help="the program")
    known = ", ".join(sorted(set(EXTENSIONS.values())))
    p.add_argument("--language", help=f"language (default: from the extension; {known})")
    p.add_argument("--stdin", help="file given to the program as standard input")
    p.add_argument("--tests", help="Python only: a file of test statements; FILE is then definitions only")
    p.add_argument("--runners", help="TOML runner table adding to or replacing the shipped one")
    _add_protocol(p)
    p.set_defaults(run=run_profile)


def run_profile(args: argparse.Namespace) -> int:
    from coderlm.collect.programs.runners import get_runner, load_runners, profile_program

    path = Path(args.file)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    language = args.language or EXTENSIONS.get(path.suffix)
    if language is None:
        raise ValueError(f"cannot tell the language of {path.name}; pass --language")
    runner = get_runner(language, load_runners(args.runners))
    stdin = None
    if args.stdin:
        if not Path(args.stdin).is_file():
            raise FileNotFoundError(f"{args.stdin}: no such file (--stdin)")
        stdin = Path(args.stdin).read_text()
    if args.tests and language != "python":
        raise ValueError("--tests is for Python programs only")
    options = {"repeats": args.repeats, "warmups": args.warmups, "timeout_s": args.timeout}
    if language == "python":
        from coderlm.collect.programs.python_profiler import profile_python

        code, tests = path.read_text(), ""
        if args.tests:
            if not Path(args.tests).is_file():
                raise FileNotFoundError(f"{args.tests}: no such file (--tests)")
            tests = Path(args.tests).read_text()
        else:
            code, tests = "", code  # a whole script: trace all of it (compiled first)
        record = profile_python(code, tests, stdin=stdin, **options)
    else:
        record = profile_program(path.read_text(), runner, stdin=stdin, **options)
        if record["status"] == "unavailable":
            raise ValueError(f"{language}: {record['stderr_tail']}")
    print(json.dumps({"file": str(path), **record}))
    return 0


# -------------------------------------------------------------- collect programs
def add_collect_programs(kinds: argparse._SubParsersAction) -> None:
    p = kinds.add_parser(
        "programs",
        help="run a program corpus in the sandbox; memory and runtime labels",
        description="Runs every program of a corpus (MBXP in many languages, MathQA, HumanEval) "
        "in a worker pool, keeps the passing ones, writes <corpus>.jsonl (task = language, "
        "group = problem) with logs and statistics. Resumable: rerun the same command.",
    )
    p.add_argument("--corpus", choices=CORPORA, default="mbxp", help="which programs (default mbxp)")
    p.add_argument("--languages", type=_csv, default=["python"], help="comma-separated (default python)")
    p.add_argument("--out", required=True, help="folder for <corpus>.jsonl, .runs.jsonl, .stats.json, .baselines.json")
    p.add_argument("--data", help="the shared data folder (default: $CODERLM_SHARED_DATA or ../shared/data)")
    p.add_argument(
        "--solutions",
        type=_csv,
        default=["canonical", "sample"],
        help="canonical, sample or both (default both; MBXP samples are model completions)",
    )
    p.add_argument("--limit", type=int, help="only the first N problems of each language")
    p.add_argument(
        "--text",
        choices=TEXT_MODES,
        default="problem+code",
        help="what the model reads: problem description + code (default, as the paper), code only, or also the tests",
    )
    p.add_argument("--twice", action="store_true", help="profile passing programs twice (label noise ceiling)")
    p.add_argument("--workers", type=int, help="parallel programs (default: number of cores)")
    p.add_argument("--runners", help="TOML runner table adding to or replacing the shipped one")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_protocol(p)
    p.set_defaults(run=run_collect_programs)


def run_collect_programs(args: argparse.Namespace) -> int:
    from coderlm.collect.programs.collect import Protocol, collect_programs

    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit must be >= 1, got {args.limit}")
    protocol = Protocol(
        repeats=args.repeats, warmups=args.warmups, timeout_s=args.timeout, passes=2 if args.twice else 1
    )
    report = collect_programs(
        args.out,
        args.corpus,
        args.languages,
        data=args.data,
        solutions=args.solutions,
        limit=args.limit,
        protocol=protocol,
        text=args.text,
        workers=args.workers,
        runners_file=args.runners,
        progress=not args.no_progress,
    )
    print(
        json.dumps(
            {
                "dataset": str(report.dataset),
                "requested": report.requested,
                "already_done": report.already_done,
                "tried": report.tried,
                "passed": report.passed,
                "skipped_languages": sorted(report.skipped_languages),
            }
        )
    )
    return 0
