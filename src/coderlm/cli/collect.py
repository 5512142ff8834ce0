"""``coderlm collect nas|programs``: build labelled datasets by running things. Both resume: rerun the
same command and only what is missing is collected."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from coderlm.cli.flags import csv_list, int_list, require_file
from coderlm.cli.profile import add_protocol_flags
from coderlm.collect.kernels.collect import SOURCES, Timing, collect_kernels
from coderlm.collect.kernels.dataset import rewrite_texts as rewrite_kernel_texts
from coderlm.collect.kernels.programs import LEVELS
from coderlm.collect.nets import TEXT_STYLES
from coderlm.collect.nets.collect import LABELS, collect_nas
from coderlm.collect.programs.cases import check_corpus, check_picks, collect_case_rows
from coderlm.collect.programs.collect import TEXT_MODES, Protocol, collect_programs, rewrite_texts
from coderlm.collect.programs.corpora import CORPORA
from coderlm.collect.programs.grown import FACTORS, check_factors, collect_grown_rows
from coderlm.options import OptionError

NAS_LABELS = ["flops", "params", "latency_cpu"]


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("collect", help="build labelled datasets by running things")
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    add_nas(kinds)
    add_programs(kinds)
    add_kernels(kinds)


def add_nas(kinds: argparse._SubParsersAction) -> None:
    p = kinds.add_parser(
        "nas",
        help="NAS-Bench-201 networks as ONNX text, with FLOPs, params, CPU latency",
        description="Samples cells, builds each network's ONNX graph (the graph torch's exporter gives, "
        "built directly), serializes it as text and labels it. Resumable: rerun the same command.",
    )
    p.add_argument("--space", choices=["nb201"], default="nb201", help="search space (default nb201)")
    p.add_argument("--count", type=int, default=200, help="networks to collect (default 200; 0 = all 15,625)")
    p.add_argument(
        "--labels",
        type=csv_list,
        default=NAS_LABELS,
        help=f"comma-separated from {', '.join(LABELS)} (default {','.join(NAS_LABELS)})",
    )
    p.add_argument("--out", required=True, help="dataset file (.jsonl) or folder (gets nb201.jsonl)")
    p.add_argument("--join", help="nasbench201.csv: add its accuracies and 27 device latencies as targets")
    p.add_argument("--seed", type=int, default=0, help="which cells, in which order (default 0)")
    p.add_argument("--cells", help="file with one cell string per line: collect exactly these (not --count)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (>1 adds noise to latency)")
    p.add_argument("--cells-per-stage", type=int, default=5, help="cells per stage of the skeleton (default 5)")
    p.add_argument("--text-style", choices=TEXT_STYLES, default="compact", help="ONNX text style (docs/onnx_text.md)")
    p.add_argument("--latency-threads", type=int, default=1, help="onnxruntime threads (default 1)")
    p.add_argument("--batch-size", type=int, default=1, help="batch size of the graph and latency (default 1)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run_nas)


def run_nas(args: argparse.Namespace) -> int:
    cells = None
    if args.cells:
        path = require_file(args.cells, "--cells")
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
    summary = {"dataset": str(report.path), "requested": report.requested, "already_done": report.already_done}
    print(json.dumps(summary | {"collected": report.collected}))
    return 0


def add_programs(kinds: argparse._SubParsersAction) -> None:
    p = kinds.add_parser(
        "programs",
        help="run a program corpus in the sandbox; memory and runtime labels",
        description="Runs every program of a corpus (MBXP in many languages, MathQA, HumanEval, TheAlgorithms; "
        "LeetCode through per-language harnesses with exact memory labels) in a worker pool, keeps the "
        "passing ones, writes <corpus>.jsonl (task = language, group = problem) with logs and statistics. "
        "Resumable: rerun the same command.",
    )
    p.add_argument("--corpus", choices=CORPORA, default="mbxp", help="which programs (default mbxp)")
    p.add_argument("--languages", type=csv_list, default=["python"], help="comma-separated (default python)")
    p.add_argument("--out", required=True, help="folder for <corpus>.jsonl, .runs.jsonl, .stats.json, .baselines.json")
    p.add_argument("--data", help="the shared data folder (default: $CODERLM_SHARED_DATA or ../shared/data)")
    p.add_argument(
        "--solutions",
        type=csv_list,
        default=["canonical", "sample"],
        help="canonical, sample or both (default both; MBXP samples are model completions; leetcode: all files)",
    )
    p.add_argument("--limit", type=int, help="only the first N problems of each language")
    p.add_argument(
        "--text",
        choices=TEXT_MODES,
        help="what the model reads: problem description + code (the paper's; the default but for leetcode), code "
        "only, also the tests, or (leetcode) a summary of the test inputs with the code, + the statement or not "
        "(inputs+code: ranks best; leetcode's default)",
    )
    p.add_argument(
        "--rewrite-text",
        action="store_true",
        help="rewrite the texts of <out>/<corpus>.jsonl in the --text mode (labels kept; nothing run) and stop",
    )
    p.add_argument("--twice", action="store_true", help="profile passing programs twice (label noise ceiling)")
    p.add_argument(
        "--case-rows",
        action="store_true",
        help="leetcode: then measure each passing program on its smallest and its median case alone, into "
        "<corpus>.cases.jsonl (training rows: the same code at other sizes; bench/programs.py --extra-train)",
    )
    p.add_argument(
        "--case-picks",
        type=int,
        default=2,
        help="with --case-rows: how many cases of each program, spread evenly by size from the smallest "
        "(default 2: the smallest and the median; a number above a program's case count: every case)",
    )
    p.add_argument(
        "--grown-rows",
        action="store_true",
        help="leetcode: then measure each passing program on its largest case grown by each --grow-factors "
        "(lists and strings repeated, integers multiplied), into <corpus>.grown.jsonl (training rows: sizes "
        "past LeetCode's cases; answers unchecked)",
    )
    p.add_argument(
        "--grow-factors",
        type=int_list,
        default=list(FACTORS),
        help=f"with --grown-rows: the factors, comma-separated (default {','.join(map(str, FACTORS))})",
    )
    p.add_argument(
        "--int-sizes",
        type=int_list,
        default=[],
        help="with --grown-rows: also measure each program's largest case with its largest integer argument "
        "(>= 2) set to each of these sizes, comma-separated (e.g. 1000,100000; default: none): how the "
        "code scales with a stated number past LeetCode's small ones",
    )
    p.add_argument(
        "--rerun-share",
        type=float,
        default=1.0,
        help="with --twice: the share of programs profiled twice, chosen by key (default 1: all)",
    )
    p.add_argument("--workers", type=int, help="parallel programs (default: number of cores)")
    p.add_argument("--runners", help="TOML runner table adding to or replacing the shipped one")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_protocol_flags(p)
    p.set_defaults(run=run_programs)


def run_programs(args: argparse.Namespace) -> int:
    if args.rewrite_text:
        count = rewrite_texts(args.out, args.corpus, args.text, data=args.data, progress=not args.no_progress)
        print(json.dumps({"dataset": str(Path(args.out) / f"{args.corpus}.jsonl"), "rewritten": count}))
        return 0
    if args.limit is not None and args.limit < 1:
        raise OptionError("limit", f"must be >= 1, got {args.limit}")
    if args.case_rows:
        check_corpus(args.corpus)  # before the corpus runs, not after
        check_picks(args.case_picks)
    if args.grown_rows:
        check_corpus(args.corpus, "grown-rows")
        check_factors(args.grow_factors, args.int_sizes)
    protocol = Protocol(args.repeats, args.warmups, args.timeout, 2 if args.twice else 1, args.rerun_share)
    common = {"data": args.data, "protocol": protocol, "text": args.text, "workers": args.workers}
    common |= {"runners_file": args.runners, "progress": not args.no_progress}
    report = collect_programs(
        args.out, args.corpus, args.languages, solutions=args.solutions, limit=args.limit, **common
    )
    summary = {"dataset": str(report.dataset), "requested": report.requested, "already_done": report.already_done}
    summary |= {"tried": report.tried, "passed": report.passed}
    summary |= {"skipped_languages": sorted(report.skipped_languages)}
    usable = [lang for lang in args.languages if lang not in report.skipped_languages]
    if args.case_rows:
        cases = collect_case_rows(args.out, args.corpus, usable, picks=args.case_picks, **common)
        summary["case_rows"] = {"dataset": str(cases.dataset), "requested": cases.requested, "passed": cases.passed}
    if args.grown_rows:
        sizes = {"factors": args.grow_factors, "int_sizes": args.int_sizes}
        grown = collect_grown_rows(args.out, args.corpus, usable, **sizes, **common)
        summary["grown_rows"] = {"dataset": str(grown.dataset), "requested": grown.requested, "passed": grown.passed}
    print(json.dumps(summary))
    return 0


def add_kernels(kinds: argparse._SubParsersAction) -> None:
    p = kinds.add_parser(
        "kernels",
        help="compile PyTorch programs with TorchInductor; each generated kernel's source and latency",
        description="Compiles KernelBench's programs (scaled to several sizes) or generated ones with "
        "torch.compile (Inductor), keeps the source of every generated kernel (C++ on CPU, Triton on CUDA), "
        "times each alone, and writes <source>.jsonl (task inductor_cpp or triton, group = program) with "
        "a whole-graph row per program, logs and statistics. Resumable: rerun the same command.",
    )
    p.add_argument("--source", choices=SOURCES, default="kernelbench", help="which programs (default kernelbench)")
    p.add_argument("--data", help="KernelBench's folder (default: $CODERLM_SHARED_DATA/kernelbench or ../shared/data)")
    p.add_argument("--count", type=int, help="KernelBench: the first N files; synthetic: N programs (required)")
    p.add_argument("--draws", type=int, default=3, help="KernelBench: sizes per program (default 3)")
    p.add_argument("--levels", type=csv_list, default=list(LEVELS), help="KernelBench levels (default all three)")
    p.add_argument(
        "--chains",
        type=int,
        default=5,
        help="synthetic: independent chains of operations per program, each its own input and kernels (default 5)",
    )
    p.add_argument("--seed", type=int, default=0, help="sizes drawn, programs generated (default 0)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="C++ kernels on CPU, Triton on CUDA")
    p.add_argument("--out", required=True, help="folder for <source>.jsonl, .runs.jsonl, .stats.json")
    p.add_argument("--workers", type=int, default=1, help="programs compiled at once (timing stays one at a time)")
    default = Timing()
    p.add_argument(
        "--repeats",
        type=int,
        default=default.repeats,
        help=f"timed calls per kernel; latency = their median (default {default.repeats})",
    )
    p.add_argument(
        "--warmups", type=int, default=default.warmups, help=f"calls before them (default {default.warmups})"
    )
    p.add_argument(
        "--min-us", type=float, default=default.min_us, help=f"drop kernels faster than this (default {default.min_us})"
    )
    p.add_argument(
        "--rerun-share",
        type=float,
        default=default.rerun_share,
        help=f"share of programs timed twice: the noise ceiling (default {default.rerun_share})",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=default.timeout_s,
        help=f"seconds per program to compile, and again to time (default {default.timeout_s:g})",
    )
    p.add_argument(
        "--max-minutes",
        type=float,
        help="start no program after this many minutes; rerun the same command to go on (default: no limit)",
    )
    p.add_argument(
        "--rewrite-text",
        action="store_true",
        help="rewrite the texts of <out>/<source>.jsonl, collected by an older version, as this one writes "
        "them (labels kept; nothing compiled or timed) and stop",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run_kernels)


def run_kernels(args: argparse.Namespace) -> int:
    if args.rewrite_text:
        dataset = Path(args.out) / f"{args.source}.jsonl"
        print(json.dumps({"dataset": str(dataset), "rewritten": rewrite_kernel_texts(dataset)}))
        return 0
    timing = Timing(args.repeats, args.warmups, args.min_us, args.rerun_share, args.timeout)
    report = collect_kernels(
        args.out,
        args.source,
        data=args.data,
        count=args.count,
        draws=args.draws,
        seed=args.seed,
        levels=args.levels,
        chains=args.chains,
        device=args.device,
        workers=args.workers,
        timing=timing,
        max_minutes=args.max_minutes,
        progress=not args.no_progress,
    )
    summary = {"dataset": str(report.dataset), "requested": report.requested, "already_done": report.already_done}
    print(json.dumps(summary | {"tried": report.tried, "left": report.left, "kernels": report.kernels}))
    return 0
