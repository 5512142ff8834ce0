"""Single-case rows: each passing program of a harness corpus measured again on one case of its tests at a time.

A row of ``<corpus>.jsonl`` is a program measured on all its test cases, under a line stating their sizes
(``inputs.describe``). Which number in that line sets the memory (the ``amount`` of a coin-change table,
the length of a list) is what a model has to learn, and one row per program shows it one size. The same
program on its smallest case and on its median case (by values; programs with at least three cases) gives
two more rows with their own line and labels: the same code at other sizes (``picks``: more cases, spread
evenly over the program's cases in order of size). ``collect_case_rows`` writes them to
``<corpus>.cases.jsonl`` (the row format of ``<corpus>.jsonl``; ``meta.case``: the case's index, ``meta.of``:
the program's case count), logging to ``<corpus>.cases.runs.jsonl``, resumable.

These are training rows: a model evaluated on unseen problems must not see a held-out program's cases
(``bench/programs.py --extra-train`` leaves out the rows of validation and test problems). Measured on
LeetCode Python: memory on unseen problems 0.856 -> 0.873 (three seeds each; docs/results.md, "Each program
on single cases"); eight picks instead of two lift GBDT, not the RLM ("Every size a program was tested
on"). Answers are not checked again: the program passed on every case in its full run.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from coderlm.collect.programs import support
from coderlm.collect.programs.collect import (
    HARNESS_CORPORA,
    CollectReport,
    Protocol,
    _check_mode,
    _check_text,
    _done_keys,
    _row,
    _run,
    default_text,
)
from coderlm.collect.programs.corpora import load_corpus
from coderlm.collect.programs.harness import HarnessJob
from coderlm.collect.programs.inputs import _count
from coderlm.collect.programs.runners import get_runner, load_runners
from coderlm.data.io import JsonlAppender, cut_torn_line, read_rows
from coderlm.options import OptionError


class PassedInFull:
    """The check of a single-case run: none (picklable, for the worker pool); the full run checked it."""

    def __call__(self, results: list, after: list | None) -> str | None:
        return None


def check_corpus(corpus: str, flag: str = "case-rows") -> None:
    """Refuse a corpus without harnesses (its programs' cases are not separable), naming ``flag``."""
    if corpus not in HARNESS_CORPORA:
        raise OptionError(flag, f"needs a corpus run through harnesses ({', '.join(HARNESS_CORPORA)}), got {corpus}")


def check_picks(picks: int) -> None:
    """Refuse a count of cases per program below one."""
    if picks < 1:
        raise OptionError("case-picks", f"must be >= 1, got {picks}")


def case_picks(cases: Sequence[Sequence], picks: int = 2) -> list[int]:
    """The indices of ``picks`` cases spread evenly over the cases in order of size by values
    (``inputs._count``), from the smallest up (two: the smallest and the median; as many as there are cases:
    every case), for three cases or more."""
    check_picks(picks)
    if len(cases) < 3:
        return []
    order = sorted(range(len(cases)), key=lambda i: sum(_count(argument) for argument in cases[i]))
    picks = min(picks, len(order))
    return sorted({order[k * len(order) // picks] for k in range(picks)})


def single_case_jobs(job: HarnessJob, picks: int = 2) -> list[tuple[HarnessJob, int]]:
    """``job`` on each of its picked cases alone, with the case's index; the key says which (``...#case3``)."""
    out = []
    for index in case_picks(job.cases.args, picks):
        cases = dataclasses.replace(job.cases, args=(job.cases.args[index],), check=PassedInFull())
        out.append((dataclasses.replace(job, key=f"{job.key}#case{index}", cases=cases), index))
    return out


def collect_case_rows(
    out: str | Path,
    corpus: str = "leetcode",
    languages: Sequence[str] = ("python",),
    *,
    picks: int = 2,
    **options: Any,
) -> CollectReport:
    """Measure every passing program of ``out/<corpus>.jsonl`` in ``languages`` on ``picks`` of its cases alone
    into ``out/<corpus>.cases.jsonl`` (same ``text`` mode), resuming what is there (a larger ``picks`` later
    adds the new cases' rows; the rows already there stay). ``options``: those of ``collect_single_rows``."""
    check_corpus(corpus)
    check_picks(picks)  # before anything runs

    def singles(job: HarnessJob) -> list[tuple[HarnessJob, dict[str, int]]]:
        count = len(job.cases.args)
        return [(single, {"case": index, "of": count}) for single, index in single_case_jobs(job, picks)]

    return collect_single_rows(out, corpus, languages, singles, "cases", **options)


def collect_single_rows(
    out: str | Path,
    corpus: str,
    languages: Sequence[str],
    singles: Callable[[HarnessJob], list[tuple[HarnessJob, dict[str, Any]]]],
    name: str,
    *,
    data: str | Path | None = None,
    protocol: Protocol | None = None,
    text: str | None = None,
    workers: int | None = None,
    runners_file: str | Path | None = None,
    progress: bool = True,
) -> CollectReport:
    """Measure the jobs ``singles`` makes of every passing program of ``out/<corpus>.jsonl`` in ``languages``
    (each with the ``meta`` its row adds) into ``out/<corpus>.<name>.jsonl``, logging to
    ``out/<corpus>.<name>.runs.jsonl``, resuming what is there (by job key). ``corpus``: one run through
    harnesses (``check_corpus``)."""
    text = default_text(corpus) if text is None else text
    _check_mode(corpus, text)
    protocol = Protocol() if protocol is None else protocol
    workers = (os.cpu_count() or 1) if workers is None else workers
    out = Path(out)
    collected = out / f"{corpus}.jsonl"
    if not collected.is_file():
        raise FileNotFoundError(
            f"{collected}: no dataset here (collect it first; single cases are of passing programs)"
        )
    passing = {row["meta"]["key"] for _, row in read_rows(collected) if row.get("task") in languages}
    runners = load_runners(runners_file)
    for language in languages:
        runner = get_runner(language, runners)
        problem = runner.harness_missing()
        if problem:
            raise OptionError("languages", f"{language}: {problem}")
        support.prepare(runner.harness.support, runner.harness.compile)
    dataset, log = out / f"{corpus}.{name}.jsonl", out / f"{corpus}.{name}.runs.jsonl"
    cut_torn_line(dataset)  # a run killed mid-write leaves half a row
    _check_text(dataset, text)
    jobs, _ = load_corpus(corpus, list(languages), data=data)
    picked = {single.key: (single, meta) for job in jobs if job.key in passing for single, meta in singles(job)}
    done = _done_keys(log)
    todo = [single for single, _ in picked.values() if single.key not in done]
    tasks = [(job, runners[job.language], protocol) for job in todo]
    tried = passed = 0
    with (
        JsonlAppender(dataset) as data_file,
        JsonlAppender(log) as log_file,
        tqdm(total=len(picked), initial=len(picked) - len(todo), desc=f"{name} rows", disable=not progress) as bar,
    ):
        for job, record in _run(tasks, workers):
            if record["status"] == "passed":
                row = _row(job, record, text, {})
                row["meta"] |= picked[job.key][1]
                data_file.write(row)
                passed += 1
            kept = {k: v for k, v in record.items() if k != "runtime_repeats_s"}
            log_file.write({"key": job.key, "language": job.language, "problem": job.problem, **kept})
            tried += 1
            bar.update(1)
    return CollectReport(dataset, len(picked), len(picked) - len(todo), tried, passed, {})
