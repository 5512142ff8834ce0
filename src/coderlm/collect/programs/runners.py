"""Compile and run programs in any language described by a runner table (``runners.toml``).

A runner is data: a file name, an optional compile command, a run command, the executables
it needs, an empty program. ``profile_program`` writes the source into a ``Sandbox``,
compiles it once (``compile_s``), then runs it ``warmups + repeats`` times, each in a fresh
process, and records the median wall time (``runtime_s``) and median peak RSS
(``peak_memory_bytes``, total as CodeNet's memory column) of the measured repeats.
``baseline`` profiles the runner's empty program the same way, so results can also be given
minus the runtime's own footprint. Python goes to ``python_profiler`` (heap peak and
in-process timing, the paper's protocol) unless ``python_mode="process"``.

A runner may also say how LeetCode-style harnesses run in its language (``[<language>.harness]``:
template, the memory and time runs, their labels; ``Harness``, used by ``coderlm.collect.programs.harness``).
A table of your own: ``load_runners("my_runners.toml")``; entries there replace or add to the
shipped ones. ``{sandbox}`` and ``{node_modules}`` in commands and ``env`` are filled in
(``$CODERLM_NODE_MODULES``, else ``/opt/coderlm-node/node_modules``, else ``./node_modules``).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import statistics
import subprocess
from pathlib import Path
from typing import Any

from coderlm.collect.programs import support
from coderlm.collect.programs.sandbox import SAFE_PATH, Limits, Sandbox, isolation

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

SHIPPED = Path(__file__).with_name("runners.toml")
HARNESS_TEMPLATES = Path(__file__).with_name("harness")
NODE_MODULES = ("/opt/coderlm-node/node_modules", "node_modules")
FIELDS = {
    "file",
    "compile",
    "compile_ok_if",
    "run",
    "needs",
    "check",
    "install",
    "env",
    "memory_mb",
    "empty",
    "mbxp",
    "extensions",
    "harness",
    "support",
}
HARNESS_FIELDS = {
    "template",
    "file",
    "compile",
    "memory",
    "time",
    "memory_env",
    "time_env",
    "support",
    "labels",
    "memory_label",
    "check",
    "install",
}


@dataclasses.dataclass(frozen=True)
class Harness:
    """How a LeetCode-style harness runs in this language (a runner's ``[<language>.harness]`` table).

    ``memory`` runs the program once for its exact counters (and the results that are checked), ``time``
    runs it for in-process timings; ``{warmups}`` and ``{repeats}`` are filled in (docs/programs.md)."""

    template: Path  # the harness template (coderlm.collect.programs.harness fills it)
    file: str  # the program's file name
    compile: tuple[str, ...]
    memory: tuple[str, ...]
    time: tuple[str, ...]
    labels: tuple[str, ...]  # what the memory run measures, in its output (e.g. heap_peak_bytes)
    memory_label: str  # the one of them that stands for the language's memory
    memory_env: tuple[tuple[str, str], ...] = ()
    time_env: tuple[tuple[str, str], ...] = ()
    support: tuple[str, ...] = ()  # helpers built once and put in each sandbox (coderlm.collect.programs.support)
    check: tuple[str, ...] = ()  # a command that must succeed for the harness to be usable
    install: str = ""  # how to install what the harness needs beyond the runner (printed when check fails)


@dataclasses.dataclass(frozen=True)
class Runner:
    language: str
    file: str
    run: tuple[str, ...]
    compile: tuple[str, ...] = ()
    compile_ok_if: str | None = None  # a compile step that fails but leaves this file behind still counts
    needs: tuple[str, ...] = ()
    check: tuple[str, ...] = ()
    install: str = ""
    env: tuple[tuple[str, str], ...] = ()
    memory_mb: int | None = 2048
    empty: str = "\n"
    mbxp: str | None = None
    extensions: tuple[str, ...] = ()  # file suffixes in this language
    support: tuple[str, ...] = ()  # helpers built once and put in each sandbox (coderlm.collect.programs.support)
    harness: Harness | None = None  # how LeetCode-style harnesses run (corpus leetcode)

    def missing(self) -> str | None:
        """None when the toolchain is usable here, else a message saying what is missing and how to install it."""
        return _missing(self)

    def harness_missing(self) -> str | None:
        """None when this language can run harnesses here, else why not."""
        if self.harness is None:
            return f"no harness: runner [{self.language}] has no [{self.language}.harness] table (docs/programs.md)"
        if not self.harness.template.is_file():
            return f"harness template {self.harness.template} not found"
        problem = self.missing()
        if problem is None and self.harness.check:
            install = self.harness.install or self.install
            problem = _missing_cached((), self.harness.check, install, self.env)
        return problem


def load_runners(path: str | Path | None = None) -> dict[str, Runner]:
    """The shipped runners, updated with the entries of ``path`` (a TOML table of tables) when given."""
    tables = _read(SHIPPED)
    if path is not None:
        tables |= _read(Path(path))
    return {name: _runner(name, table, path or SHIPPED) for name, table in tables.items()}


def get_runner(language: str, runners: dict[str, Runner] | None = None) -> Runner:
    runners = load_runners() if runners is None else runners
    if language not in runners:
        raise ValueError(f"unknown language {language!r}; known: {', '.join(sorted(runners))}")
    return runners[language]


def language_of(path: str | Path, runners: dict[str, Runner] | None = None) -> str | None:
    """The language whose runner claims ``path``'s suffix (its ``extensions``), or None."""
    runners = load_runners() if runners is None else runners
    suffix = Path(path).suffix
    return next((name for name, runner in runners.items() if suffix in runner.extensions), None)


def profile_program(
    source: str,
    runner: Runner,
    *,
    stdin: str | None = None,
    repeats: int = 11,
    warmups: int = 3,
    timeout_s: float = 10.0,
    compile_timeout_s: float = 120.0,
    passes: int = 1,
) -> dict[str, Any]:
    """Compile (if the runner does) and run ``source`` ``warmups + repeats`` times; a JSON-ready record.

    ``passes > 1`` measures the same build again (each pass: its warm-ups and repeats) and puts the
    later passes' figures in ``reruns``: the run-to-run noise of the labels.

    ``status``: passed (every run exited 0), compile_error, failed, timeout, crashed, output_limit,
    or unavailable (toolchain missing). The first run that does not pass stops the profile.
    """
    if repeats < 1 or warmups < 0:
        raise ValueError(f"repeats must be >= 1 and warmups >= 0, got {repeats}, {warmups}")
    record: dict[str, Any] = {
        "language": runner.language,
        "repeats": repeats,
        "warmups": warmups,
        "timeout_s": timeout_s,
    }
    problem = runner.missing()
    if problem:
        return record | {"status": "unavailable", "stderr_tail": problem}
    with Sandbox() as box:
        fill = functools.partial(_fill, sandbox=str(box.path))
        env = {k: fill(v) for k, v in runner.env}
        box.write(runner.file, source)
        support.install(runner.support, box, runner.compile)
        if runner.compile:
            limits = Limits(timeout_s=compile_timeout_s, memory_mb=None, processes=512, file_mb=512)
            built = box.run([fill(a) for a in runner.compile], limits, env=env)
            record["compile_s"] = built.wall_s
            leftover = runner.compile_ok_if is not None and (box.path / runner.compile_ok_if).is_file()
            compiled = built.ok or (built.status == "error" and leftover)
            if not compiled:
                status = "timeout" if built.status == "timeout" else "compile_error"
                return record | {
                    "status": status,
                    "exit_code": built.returncode,
                    "stderr_tail": (built.stderr + built.stdout)[-2000:],
                }
            if not built.ok:
                record["compile_warnings"] = built.stdout[-2000:]
        argv = [fill(a) for a in runner.run]
        data = stdin.encode() if stdin is not None else None
        limits = Limits(timeout_s=timeout_s, memory_mb=runner.memory_mb)
        measured = []
        for _ in range(passes):
            walls, rss = [], []
            for i in range(warmups + repeats):
                result = box.run(argv, limits, stdin=data, env=env)
                if not result.ok:
                    status = {"error": "failed", "signal": "crashed"}.get(result.status, result.status)
                    return record | {
                        "status": status,
                        "exit_code": result.returncode,
                        "failed_run": i,
                        "stderr_tail": result.stderr_tail(),
                    }
                if i >= warmups:
                    walls.append(result.wall_s)
                    rss.append(result.peak_rss_bytes)
            measured.append(
                {
                    "runtime_s": statistics.median(walls),
                    "runtime_repeats_s": walls,
                    "peak_memory_bytes": int(statistics.median(rss)),
                    "peak_rss_bytes": int(max(rss)),
                }
            )
    record |= {"status": "passed", **measured[0], "exit_code": 0}
    if passes > 1:
        record["reruns"] = [{k: m[k] for k in ("runtime_s", "peak_memory_bytes")} for m in measured[1:]]
    return record


def baseline(runner: Runner, *, repeats: int = 11, warmups: int = 3, timeout_s: float = 30.0) -> dict[str, Any]:
    """The runner's empty program, profiled like any other (Python: as a process, its interpreter start-up)."""
    return profile_program(runner.empty, runner, repeats=repeats, warmups=warmups, timeout_s=timeout_s)


def node_modules() -> str:
    for candidate in (os.environ.get("CODERLM_NODE_MODULES"), *NODE_MODULES):
        if candidate and Path(candidate).is_dir():
            return str(Path(candidate).resolve())
    return os.environ.get("CODERLM_NODE_MODULES") or NODE_MODULES[0]


def _fill(text: str, sandbox: str) -> str:
    return text.replace("{sandbox}", sandbox).replace("{node_modules}", node_modules())


@functools.cache
def _missing_cached(needs: tuple[str, ...], check: tuple[str, ...], install: str, env: tuple) -> str | None:
    absent = [tool for tool in needs if shutil.which(tool, path=SAFE_PATH) is None]
    if absent:
        return f"toolchain missing: {', '.join(absent)} not on PATH; install: {install}"
    if check:
        environment = {"PATH": SAFE_PATH, "HOME": "/tmp"} | {k: _fill(v, "/tmp") for k, v in env}
        try:
            probe = subprocess.run([_fill(a, "/tmp") for a in check], capture_output=True, env=environment, timeout=60)
            ok = probe.returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if not ok:
            return f"toolchain incomplete: `{' '.join(check)}` failed; install: {install}"
    return None


def _missing(runner: Runner) -> str | None:
    isolation()  # build the launcher before the first measurement
    return _missing_cached(runner.needs, runner.check, runner.install, runner.env)


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such runner table")
    with open(path, "rb") as f:
        try:
            return tomllib.load(f)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: not valid TOML ({exc})") from exc


def _runner(name: str, table: Any, path: str | Path) -> Runner:
    if not isinstance(table, dict):
        raise ValueError(f"{path}: [{name}] must be a table")
    unknown = sorted(set(table) - FIELDS)
    if unknown:
        raise ValueError(f"{path}: [{name}] has unknown field(s) {unknown}; known: {sorted(FIELDS)}")
    for required in ("file", "run"):
        if required not in table:
            raise ValueError(f"{path}: [{name}] needs '{required}'")
    memory = table.get("memory_mb", 2048)
    return Runner(
        language=name,
        file=str(table["file"]),
        run=tuple(table["run"]),
        compile=tuple(table.get("compile", ())),
        compile_ok_if=table.get("compile_ok_if"),
        needs=tuple(table.get("needs", ())),
        check=tuple(table.get("check", ())),
        install=str(table.get("install", "")),
        env=tuple(sorted((str(k), str(v)) for k, v in table.get("env", {}).items())),
        memory_mb=None if not memory else int(memory),
        empty=str(table.get("empty", "\n")),
        mbxp=table.get("mbxp"),
        extensions=tuple(table.get("extensions", [Path(str(table["file"])).suffix])),
        support=tuple(table.get("support", ())),
        harness=_harness(name, table, path),
    )


def _harness(name: str, table: dict, path: str | Path) -> Harness | None:
    spec = table.get("harness")
    if spec is None:
        return None
    where = f"{path}: [{name}.harness]"
    if not isinstance(spec, dict):
        raise ValueError(f"{where} must be a table")
    unknown = sorted(set(spec) - HARNESS_FIELDS)
    if unknown:
        raise ValueError(f"{where} has unknown field(s) {unknown}; known: {sorted(HARNESS_FIELDS)}")
    for required in ("template", "memory", "time", "labels"):
        if required not in spec:
            raise ValueError(f"{where} needs '{required}'")
    labels = tuple(spec["labels"])
    memory_label = spec.get("memory_label", labels[0] if labels else "")
    if memory_label not in labels:
        raise ValueError(f"{where}: memory_label {memory_label!r} is not one of labels {list(labels)}")
    template = Path(str(spec["template"]))
    if not template.is_absolute():  # beside the table that names it, else shipped with the package
        beside = Path(path).parent / template
        template = beside if beside.is_file() else HARNESS_TEMPLATES / template
    return Harness(
        template=template,
        file=str(spec.get("file", table["file"])),
        compile=tuple(spec.get("compile", table.get("compile", ()))),
        memory=tuple(spec["memory"]),
        time=tuple(spec["time"]),
        labels=labels,
        memory_label=memory_label,
        memory_env=tuple(sorted((str(k), str(v)) for k, v in spec.get("memory_env", {}).items())),
        time_env=tuple(sorted((str(k), str(v)) for k, v in spec.get("time_env", {}).items())),
        support=tuple(spec.get("support", ())),
        check=tuple(spec.get("check", ())),
        install=str(spec.get("install", "")),
    )
