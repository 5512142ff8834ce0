"""Collect a program dataset: run every program of a corpus in a sandbox, keep the ones that pass.

``collect_programs(out, "mbxp", ["python", "cpp"])`` writes, in the folder ``out``:

=========================  ==============================================================
``<corpus>.jsonl``         passing programs in the project's dataset format: ``text`` =
                           problem description + code, the description written once
                           (``with_description``); ``text="code"``: the code alone;
                           ``targets = {"peak_memory_bytes", "runtime_s"}``, ``task`` = language,
                           ``group`` = problem id, ``meta`` = the profile (key, solution kind,
                           peak RSS, compile time, repeats, the runtime's baseline, reruns)
                           and how the text was written (``text``, ``text_revision``)
``<corpus>.runs.jsonl``    one line per program tried, passing or not (status, exit code,
                           stderr tail): the resume log and the failure record
``<corpus>.baselines.json`` each language's empty program, profiled the same way
``<corpus>.stats.json``     per language: tried, passed, failed, wrong answers, compile errors,
                           timeouts, crashes, output-limit hits; programs left out by reason;
                           collection wall time (summed over resumes)
``<corpus>.skips.jsonl``    programs the corpus could not turn into runnable ones, with the reason
=========================  ==============================================================

Targets: for Python, ``peak_memory_bytes`` is the tests' dynamic heap peak (tracemalloc) and
``runtime_s`` the median in-process time of the tests (``python_profiler``); for other languages,
the median peak RSS and wall time of the whole run step (``runners``, CodeNet's convention);
subtract ``meta.baseline_*`` for figures net of the runtime. For ``leetcode`` (``HARNESS_CORPORA``),
each language's exact labels measured around the solution's calls (``coderlm.collect.programs.harness``:
``heap_peak_bytes``, ``alloc_bytes``, ``alloc_count`` as the language allows), the in-process
``runtime_s`` and the timing process's ``peak_rss_bytes``; ``meta.memory_label`` names the memory one.

Programs run in a pool of ``workers`` processes (default: the number of cores). Lines are
appended, flushed and fsynced one at a time (``coderlm.data.io.JsonlAppender``); a rerun skips
every key already in the runs log (a half-written last line, from a kill, is cut off first), and
refuses a dataset whose rows were written with another text mode or rule (one dataset holds one
kind of text). Concurrent workers share the CPU, so ``workers > 1`` adds timing noise; the
``twice`` option measures it (``meta.reruns``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
import zlib
from collections import Counter
from collections.abc import Sequence
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from coderlm.atomic import write_atomic
from coderlm.collect.programs import support
from coderlm.collect.programs.corpora import ProgramJob, load_corpus
from coderlm.collect.programs.harness import HarnessJob, profile_harness
from coderlm.collect.programs.inputs import describe
from coderlm.collect.programs.python_profiler import profile_python_passes
from coderlm.collect.programs.runners import baseline, get_runner, load_runners, profile_program
from coderlm.collect.programs.sandbox import isolation
from coderlm.data.io import JsonlAppender, cut_torn_line, read_rows
from coderlm.options import OptionError

TEXT_MODES = ("problem+code", "code", "problem+code+tests", "code+inputs+problem", "code+inputs", "inputs+code")
INPUT_MODES = ("code+inputs+problem", "code+inputs", "inputs+code")  # need the test inputs: harness corpora only
DEFAULT_TEXT = {"leetcode": "inputs+code"}  # what ranks best where measured (docs/programs.md); else the paper's
TEXT_REVISION = 2  # 1: the description was prepended even where the code already stated it
STATUSES = ("passed", "failed", "wrong_answer", "compile_error", "timeout", "crashed", "output_limit")
HARNESS_CORPORA = ("leetcode",)  # run through per-language harnesses, with exact labels


@dataclasses.dataclass(frozen=True)
class Protocol:
    repeats: int = 11
    warmups: int = 3
    timeout_s: float = 10.0
    passes: int = 1  # 2 = profile passing programs twice (the label noise ceiling)
    rerun_share: float = 1.0  # with passes > 1: the share of programs profiled again (chosen by key, stable)

    def __post_init__(self) -> None:
        if not 0.0 <= self.rerun_share <= 1.0:
            raise OptionError("rerun_share", f"must be in [0, 1], got {self.rerun_share}")

    def passes_for(self, key: str) -> int:
        """How many times the program ``key`` is profiled: ``passes`` for a stable ``rerun_share`` of keys, else 1."""
        chosen = zlib.crc32(key.encode()) / 2**32 < self.rerun_share
        return self.passes if self.rerun_share >= 1.0 or chosen else 1


@dataclasses.dataclass
class CollectReport:
    dataset: Path
    requested: int
    already_done: int
    tried: int
    passed: int
    skipped_languages: dict[str, str]


def collect_programs(
    out: str | Path,
    corpus: str = "mbxp",
    languages: Sequence[str] = ("python",),
    *,
    data: str | Path | None = None,
    solutions: Sequence[str] = ("canonical", "sample"),
    limit: int | None = None,
    protocol: Protocol = Protocol(),
    text: str | None = None,
    workers: int | None = None,
    runners_file: str | Path | None = None,
    progress: bool = True,
) -> CollectReport:
    """Profile the programs of ``corpus`` in ``languages`` into the folder ``out``, resuming what is there.
    ``text``: what the model reads (``TEXT_MODES``); default ``default_text(corpus)``."""
    text = default_text(corpus) if text is None else text
    _check_mode(corpus, text)
    workers = (os.cpu_count() or 1) if workers is None else workers
    if workers < 1:
        raise OptionError("workers", f"must be >= 1, got {workers}")
    runners = load_runners(runners_file)
    for language in languages:
        get_runner(language, runners)
    out = Path(out)
    if out.suffix == ".jsonl":
        raise OptionError("out", f"is a folder (it gets {corpus}.jsonl and logs), got {out}")
    out.mkdir(parents=True, exist_ok=True)
    dataset, log = out / f"{corpus}.jsonl", out / f"{corpus}.runs.jsonl"
    cut_torn_line(dataset)
    _check_text(dataset, text)
    skipped = {}
    harnessed = corpus in HARNESS_CORPORA
    for language in languages:
        problem = runners[language].harness_missing() if harnessed else runners[language].missing()
        if problem:
            print(f"coderlm: skipping {language}: {problem}", file=sys.stderr)
            skipped[language] = problem
    usable = [lang for lang in languages if lang not in skipped]
    jobs, skips = load_corpus(corpus, usable, data=data, solutions=solutions, limit=limit) if usable else ([], [])
    _write_skips(out / f"{corpus}.skips.jsonl", skips)
    baselines = {} if harnessed else _baselines(out / f"{corpus}.baselines.json", usable, runners, protocol)
    for language in usable if harnessed else ():
        harness = runners[language].harness
        support.prepare(harness.support, harness.compile)
    done = _done_keys(log)
    todo = [job for job in jobs if job.key not in done]
    bar = None
    if progress:
        bar = tqdm(total=len(jobs), initial=len(jobs) - len(todo), desc=f"collect {corpus}", unit="prog")
    start, tried, passed = time.perf_counter(), 0, 0
    tasks = [(job, runners[job.language], protocol) for job in todo]
    try:
        with JsonlAppender(dataset) as data_file, JsonlAppender(log) as log_file:
            for job, record in _run(tasks, workers):
                if record["status"] == "passed":
                    data_file.write(_row(job, record, text, baselines.get(job.language, {})))
                    passed += 1
                log_file.write(
                    {
                        "key": job.key,
                        "language": job.language,
                        "problem": job.problem,
                        **{k: v for k, v in record.items() if k not in ("runtime_repeats_s",)},
                    },
                )
                tried += 1
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(passed=passed)
    finally:
        if bar is not None:
            bar.close()
        elapsed = time.perf_counter() - start
        _write_stats(out / f"{corpus}.stats.json", log, elapsed, skipped, protocol, workers, skips)
    return CollectReport(dataset, len(jobs), len(jobs) - len(todo), tried, passed, skipped)


def profile_job(task: tuple[ProgramJob | HarnessJob, Any, Protocol]) -> tuple[ProgramJob | HarnessJob, dict[str, Any]]:
    """One program, profiled in this process (the pool's unit of work); never raises for the program."""
    job, runner, protocol = task
    options = {"repeats": protocol.repeats, "warmups": protocol.warmups, "timeout_s": protocol.timeout_s}
    passes = protocol.passes_for(job.key)
    try:
        if isinstance(job, HarnessJob):
            record = profile_harness(job, runner, passes=passes, **options)
        elif job.language == "python":
            record = profile_python_passes(job.code, job.tests, passes, module=job.module, **options)
        else:
            record = profile_program(job.source, runner, passes=passes, **options)
    except Exception as exc:  # a harness fault on one program must not stop the collection
        record = {"status": "harness_error", "stderr_tail": f"{type(exc).__name__}: {exc}"}
    return job, record


def _run(tasks: list, workers: int):
    if workers == 1 or len(tasks) <= 1:
        yield from map(profile_job, tasks)
        return
    with get_context("fork").Pool(workers) as pool:  # workers import nothing heavy; spawn would re-import torch
        yield from pool.imap_unordered(profile_job, tasks, chunksize=1)


def with_description(description: str, code: str) -> str:
    """``description`` + blank line + ``code``, unless the code already states it (MBXP, MathQA and
    HumanEval prompts carry the description in their comment or docstring: a second copy only spends
    context)."""
    if not description or " ".join(description.split()) in " ".join(code.split()):
        return code
    return f"{description}\n\n{code}"


def default_text(corpus: str) -> str:
    """The text mode a corpus is collected in unless told: the inputs line and the code for LeetCode (its
    harness knows the test inputs), the statement and the code (the paper's) elsewhere."""
    return DEFAULT_TEXT.get(corpus, "problem+code")


def _check_mode(corpus: str, text: str) -> None:
    if text not in TEXT_MODES:
        raise OptionError("text", f"must be one of {', '.join(TEXT_MODES)}, got {text!r}")
    if text in INPUT_MODES and corpus not in HARNESS_CORPORA:
        raise OptionError("text", f"{text} states the test inputs: only for {', '.join(HARNESS_CORPORA)}, not {corpus}")


def text_of(job: ProgramJob | HarnessJob, text: str) -> str:
    """What the model reads of ``job`` in mode ``text`` (``TEXT_MODES``). ``code+inputs+problem``: the code
    first (a long statement no longer pushes it past the tokens read), the summary of the test inputs
    (``inputs.describe``: what the labels scale with), then the statement; ``code+inputs``: the same without
    the statement; ``inputs+code``: the summary first, then the code (the line at a fixed place: the model learns
    faster and ranks runtime better from it)."""
    if text in INPUT_MODES:
        assert isinstance(job, HarnessJob)
        inputs = describe(job.cases.args, job.language)
        if text == "inputs+code":
            body = job.code.rstrip("\n")
            return f"{inputs}\n{body}\n"
        stated = f"{job.code}\n{inputs}\n"
        return stated if text == "code+inputs" else f"{stated}\n{job.description}"
    code = job.source if text == "problem+code+tests" else job.code
    return code if text == "code" else with_description(job.description, code)


def _row(job: ProgramJob | HarnessJob, record: dict[str, Any], text: str, base: dict[str, Any]) -> dict[str, Any]:
    body = text_of(job, text)
    if isinstance(job, HarnessJob):
        return _harness_row(job, record, text, body)
    meta = {
        "key": job.key,
        "solution": job.solution,
        "text": text,
        "text_revision": TEXT_REVISION,
        **{
            k: record[k]
            for k in ("peak_rss_bytes", "compile_s", "process_wall_s", "repeats", "warmups", "reruns")
            if k in record
        },
    }
    if base.get("status") == "passed":
        meta["baseline_peak_memory_bytes"] = base["peak_memory_bytes"]
        meta["baseline_runtime_s"] = base["runtime_s"]
    targets = {"peak_memory_bytes": float(record["peak_memory_bytes"]), "runtime_s": float(record["runtime_s"])}
    return {"text": body, "targets": targets, "task": job.language, "group": job.problem, "meta": meta}


def _harness_row(job: HarnessJob, record: dict[str, Any], text: str, body: str) -> dict[str, Any]:
    """Targets: the language's exact labels, ``runtime_s`` (in-process) and ``peak_rss_bytes`` (the timing
    process); ``meta.memory_label`` names the label that stands for the language's memory."""
    targets = {k: float(v) for k, v in record["labels"].items()} | {"peak_rss_bytes": float(record["peak_rss_bytes"])}
    meta = {
        "key": job.key,
        "solution": job.solution,
        "text": text,
        "text_revision": TEXT_REVISION,
        "memory_label": record["memory_label"],
        "labels": sorted(record["labels"]),
        "cases": len(job.cases.args),
        "cases_source": job.cases.source,
        "method": job.method,
        **{k: record[k] for k in ("compile_s", "process_wall_s", "repeats", "warmups", "reruns") if k in record},
    }
    return {"text": body, "targets": targets, "task": job.language, "group": job.problem, "meta": meta}


def _write_skips(path: Path, skips: list[dict[str, Any]]) -> None:
    """The programs left out (rewritten whole each session: it follows from the corpus, not from runs)."""
    write_atomic(path, "".join(json.dumps(s) + "\n" for s in skips))


def _check_text(path: Path, text: str) -> None:
    """Refuse to resume ``path`` if a row in it was written another way: another ``text`` mode or,
    where the text holds the problem, another description rule. Rows without these keys predate
    them: ``problem+code``, revision 1."""
    if not path.is_file():
        return
    for number, row in read_rows(path):
        try:
            meta = row["meta"]
            found, revision = meta.get("text", "problem+code"), meta.get("text_revision", 1)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}:{number}: not a row written by the program collector ({exc})") from exc
        if found != text or (text != "code" and revision != TEXT_REVISION):
            raise ValueError(
                f"{path}:{number}: written with text={found!r} (text revision {revision}), this run writes "
                f"text={text!r} (revision {TEXT_REVISION}); collect into another out (one dataset holds one "
                "kind of text)"
            )


def rewrite_texts(
    out: str | Path, corpus: str, text: str | None = None, *, data: str | Path | None = None, progress: bool = True
) -> int:
    """Rewrite every row of ``out/<corpus>.jsonl`` with the text mode ``text`` (default ``default_text(corpus)``;
    labels kept: a row's text follows from its program in the corpus, found by ``meta.key``), atomically;
    returns the rows rewritten."""
    text = default_text(corpus) if text is None else text
    _check_mode(corpus, text)
    dataset = Path(out) / f"{corpus}.jsonl"
    if not dataset.is_file():
        raise FileNotFoundError(f"{dataset}: no dataset here (collect it first)")
    cut_torn_line(dataset)
    rows = [row for _, row in read_rows(dataset)]
    languages = sorted({row.get("task") for row in rows if isinstance(row, dict) and row.get("task")})
    jobs, _ = load_corpus(corpus, languages, data=data)
    by_key = {job.key: job for job in jobs}
    for number, row in enumerate(tqdm(rows, desc="rewrite texts", unit="row", disable=not progress), start=1):
        try:
            job = by_key[row["meta"]["key"]]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{dataset}:{number}: no program of corpus {corpus} for this row ({exc})") from exc
        row["text"] = text_of(job, text)
        row["meta"] |= {"text": text, "text_revision": TEXT_REVISION}
    write_atomic(dataset, "".join(json.dumps(row) + "\n" for row in rows))
    return len(rows)


def _baselines(path: Path, languages: Sequence[str], runners: dict, protocol: Protocol) -> dict[str, Any]:
    known = json.loads(path.read_text()) if path.is_file() else {}
    for language in languages:
        if language not in known:
            known[language] = baseline(runners[language], repeats=protocol.repeats, warmups=protocol.warmups)
            path.write_text(json.dumps(known, indent=2) + "\n")
    return known


def _done_keys(log: Path) -> set[str]:
    """Keys already tried, from the runs log (a torn last line is cut off first)."""
    cut_torn_line(log)
    if not log.is_file():
        return set()
    keys = set()
    for number, row in read_rows(log):
        try:
            keys.add(row["key"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{log}:{number}: not a line written by the program collector ({exc})") from exc
    return keys


def _write_stats(
    path: Path, log: Path, wall_s: float, skipped: dict, protocol: Protocol, workers: int, skips: list[dict]
) -> None:
    previous = json.loads(path.read_text()) if path.is_file() else {}
    counts: dict[str, Counter] = {}
    if log.is_file():
        for _, row in read_rows(log):
            counts.setdefault(row["language"], Counter())[row["status"]] += 1
    languages = {}
    for lang, c in sorted(counts.items()):
        languages[lang] = {
            "tried": sum(c.values()),
            **{s: c.get(s, 0) for s in STATUSES},
            **{s: n for s, n in c.items() if s not in STATUSES},
        }
    # a language skipped by an earlier run (a missing toolchain) and collected since is no longer skipped
    earlier = {lang: why for lang, why in previous.get("skipped_languages", {}).items() if lang not in languages}
    stats = {
        "languages": languages,
        "skipped_languages": {**earlier, **skipped},
        "skipped_programs": _skip_counts(skips),
        "wall_s": previous.get("wall_s", 0.0) + wall_s,
        "sessions": previous.get("sessions", 0) + 1,
        "protocol": dataclasses.asdict(protocol),
        "workers": workers,
        "isolation": {k: v for k, v in isolation().items() if k not in ("launcher", "unshare", "setpriv")},
    }
    write_atomic(path, json.dumps(stats, indent=2) + "\n")


def _skip_counts(skips: list[dict]) -> dict[str, dict[str, int]]:
    """Per language: how many programs were left out, by reason."""
    counts: dict[str, Counter] = {}
    for skip in skips:
        counts.setdefault(skip["language"], Counter())[skip["reason"]] += 1
    return {lang: dict(c.most_common()) for lang, c in sorted(counts.items())}
