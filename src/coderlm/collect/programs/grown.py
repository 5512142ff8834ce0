"""Grown-case rows: each passing program of a harness corpus measured on its largest case made larger.

LeetCode's test cases are small (the median program's longest list has 5 elements), so its labels show
little of how a program's memory grows with its inputs, and a held-out program whose memory one stated
number sets past every training case (a table of ``int 1000000`` entries) is predicted at the footprint of
a small case. ``grown_case`` scales a case by a factor: every list, string and linked list is repeated
``factor`` times end to end (``[3, 1] -> [3, 1, 3, 1]``; a nested list repeats its outer list, so pairs and
rows stay whole), every integer argument is multiplied by it (unless past ``INT_CAP``), other values stay.
The same program on its largest case grown by each factor gives rows whose inputs line states sizes no
LeetCode case reaches, labelled by what the program costs there. ``int_sizes`` adds rows where only the
largest integer argument changes, set to each size (``sized_case``): LeetCode's integers are mostly small
(the median program's largest is 6, so x64 reaches 384), while a held-out case may state ``int 1000000``.
``collect_grown_rows`` writes the rows to ``<corpus>.grown.jsonl`` (the row format of ``<corpus>.jsonl``;
``meta.case``: the grown case's index, ``meta.grown``: the factor, or ``meta.int``: the size), logging to
``<corpus>.grown.runs.jsonl``, resumable.

Grown inputs may break a problem's constraints (an index past the end, a tree that is no longer a search
tree) and their answers are unknown, so nothing is checked: a program that fails, crashes or runs out of
time on a grown case gives no row (the log says why), and one that returns a wrong answer is still
measured on the inputs it was given. Training rows only, like case rows (``bench/programs.py
--extra-train`` leaves out validation and test problems' rows). Measured on LeetCode Python: the RLM's memory
ranking on unseen problems 0.866 -> 0.885 (three seeds), GBDT's and the regression head's not (docs/results.md,
"Past LeetCode's sizes"); a third factor, 512, adds nothing, and neither do integer sizes 1,000 and 100,000
(results.md, "A stated number set past LeetCode's").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from coderlm.collect.programs.cases import PassedInFull, check_corpus, collect_single_rows
from coderlm.collect.programs.collect import CollectReport
from coderlm.collect.programs.harness import HarnessJob
from coderlm.collect.programs.inputs import _count
from coderlm.options import OptionError

INT_CAP = 10**7  # an integer argument grown past this stays as it was (loops to n would only time out)
FACTORS = (8, 64)


def check_factors(factors: Sequence[int], int_sizes: Sequence[int] = ()) -> None:
    """Refuse an empty list of factors or a factor below two (one is the case as it was), and integer
    sizes below two or past ``INT_CAP``."""
    if not factors or any(f < 2 for f in factors):
        raise OptionError("grow-factors", f"must be one or more integers >= 2, got {list(factors)}")
    if any(not 2 <= n <= INT_CAP for n in int_sizes):
        raise OptionError("int-sizes", f"must be integers from 2 to {INT_CAP:,}, got {list(int_sizes)}")


def grow(value: Any, factor: int, top: bool = True) -> Any:
    """``value`` grown by ``factor``: lists and strings repeated end to end (a nested list's outer list
    only), integers multiplied when ``top`` (an argument, not a list's element) and within ``INT_CAP``."""
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        return value * factor if top and abs(value * factor) <= INT_CAP else value
    if isinstance(value, str | list):
        return value * factor
    return value


def grown_case(case: Sequence[Any], factor: int) -> tuple[Any, ...]:
    """Every argument of ``case`` grown by ``factor`` (``grow``; linked lists and trees in LeetCode's list
    encodings grow as lists do)."""
    return tuple(grow(argument, factor) for argument in case)


def sized_case(case: Sequence[Any], size: int) -> tuple[Any, ...] | None:
    """``case`` with its largest integer argument set to ``size`` (the first of equals; other arguments as
    they are), or None where no integer argument is at least 2 or the largest is already ``size`` or more."""
    ints = [i for i, a in enumerate(case) if isinstance(a, int) and not isinstance(a, bool) and a >= 2]
    if not ints:
        return None
    largest = max(ints, key=lambda i: case[i])
    if case[largest] >= size:
        return None
    return tuple(size if i == largest else a for i, a in enumerate(case))


def largest_case(cases: Sequence[Sequence[Any]]) -> int:
    """The index of the case with the most values (``inputs._count``; the first of equals)."""
    return max(range(len(cases)), key=lambda i: sum(_count(argument) for argument in cases[i]))


def grown_jobs(
    job: HarnessJob, factors: Sequence[int] = FACTORS, int_sizes: Sequence[int] = ()
) -> list[tuple[HarnessJob, dict[str, int]]]:
    """``job`` on its largest case grown by each factor, then with its largest integer set to each of
    ``int_sizes`` (where it has one below), with each row's meta; the key says which (``...#case3x8``,
    ``...#case3n100000``). A job without cases gives none."""
    check_factors(factors, int_sizes)
    if not job.cases.args:
        return []
    index = largest_case(job.cases.args)
    largest = job.cases.args[index]
    variants = [(grown_case(largest, f), f"x{f}", {"grown": f}) for f in factors]
    variants += [(sized_case(largest, n), f"n{n}", {"int": n}) for n in int_sizes]
    out = []
    for args, name, meta in variants:
        if args is None:
            continue
        cases = dataclasses.replace(job.cases, args=(args,), check=PassedInFull())
        grown = dataclasses.replace(job, key=f"{job.key}#case{index}{name}", cases=cases)
        out.append((grown, {"case": index, **meta}))
    return out


def collect_grown_rows(
    out: str | Path,
    corpus: str = "leetcode",
    languages: Sequence[str] = ("python",),
    *,
    factors: Sequence[int] = FACTORS,
    int_sizes: Sequence[int] = (),
    **options: Any,
) -> CollectReport:
    """Measure every passing program of ``out/<corpus>.jsonl`` in ``languages`` on its largest case grown by
    each of ``factors`` (and with its largest integer set to each of ``int_sizes``) into
    ``out/<corpus>.grown.jsonl`` (same ``text`` mode), resuming what is there (new factors or sizes later add
    their rows). ``options``: those of ``cases.collect_single_rows``."""
    check_corpus(corpus, "grown-rows")
    check_factors(factors, int_sizes)  # before anything runs
    factors, int_sizes = tuple(factors), tuple(int_sizes)
    jobs = lambda job: grown_jobs(job, factors, int_sizes)  # noqa: E731
    return collect_single_rows(out, corpus, languages, jobs, "grown", **options)
