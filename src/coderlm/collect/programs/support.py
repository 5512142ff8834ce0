"""Helpers a harness needs in its sandbox, built once per machine and linked into each sandbox.

A runner's ``[<language>.harness]`` table names them in ``support``:

- ``alloc_shim``: ``alloc_shim.so``, the LD_PRELOAD allocation counter (``harness/alloc_shim.c``), built
  with the system C compiler;
- ``cpp_pch``: ``cpp_harness.h`` (``<bits/stdc++.h>`` and the C++ harness's declarations), its
  precompiled header and ``cpp_harness.o`` (the harness's parsing, conversions and driver), both built
  with the compiler and flags of the harness's compile step, which links the object (a C++ harness then
  compiles in ~0.7 s instead of ~3 s). The precompiled header is the file the step names after
  ``-include-pch`` (clang), else ``cpp_harness.h.gch`` beside the header (g++, which ignores it where the
  flags differ);
- ``javac_cds``: ``javac.jsa``, a class-data-sharing archive of the classes javac loads, made by
  compiling the Java harness once (javac then starts ~25% faster; the compile step names it with
  ``-J-XX:SharedArchiveFile=javac.jsa``, and a JVM that cannot use it goes on without);
- ``python_packages``: the pure-Python package ``sortedcontainers`` (LeetCode's Python has it), linked
  from the collector's own environment into ``{sandbox}/sortedcontainers``, where the Python harness
  looks (left out when it is not installed: solutions that import it then fail);
- ``go_cache``: a Go build cache warmed by building the Go harness once (Go >= 1.20 ships no compiled
  standard library, so a cold build takes ~15 s), copied as hard links into ``{sandbox}/.gocache``.

Built files live under ``$CODERLM_CACHE`` (else ``~/.cache/coderlm``), named by a digest of their
sources and flags, written atomically, readable by all and writable by the builder only: a sandboxed
program (run as ``nobody``) can read its links but not change what the next sandbox gets. Hard links
cost nothing; across file systems the files are copied.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from coderlm.collect.programs.sandbox import NOBODY, SAFE_PATH, Sandbox, isolation

HARNESS = Path(__file__).with_name("harness")
SHIM_SOURCE = HARNESS / "alloc_shim.c"
CPP_HEADER = HARNESS / "cpp_harness.h"
SUPPORTS = ("alloc_shim", "cpp_pch", "javac_cds", "python_packages", "go_cache")
PYTHON_PACKAGES = ("sortedcontainers",)


def cache_dir() -> Path:
    return Path(os.environ.get("CODERLM_CACHE", Path.home() / ".cache" / "coderlm"))


def prepare(names: tuple[str, ...], compile_argv: tuple[str, ...] = ()) -> None:
    """Build the helpers ``names`` now (the collector does, before its workers start, so that they do not
    all build them at once); unknown names raise."""
    with Sandbox() as box:
        install(names, box, compile_argv)


def install(names: tuple[str, ...], box: Sandbox, compile_argv: tuple[str, ...] = ()) -> None:
    """Put the helpers ``names`` into ``box`` (building them on first use); unknown names raise."""
    for name in names:
        if name == "alloc_shim":
            _link(_alloc_shim(), box, "alloc_shim.so")
        elif name == "cpp_pch":
            box.write(CPP_HEADER.name, CPP_HEADER.read_bytes())
            flags, pch_name = _pch_flags(compile_argv)
            for built in _cpp_pch(flags, pch_name):
                _link(built, box, built.name)
        elif name == "javac_cds":
            archive = _javac_cds()
            if archive is not None:
                _link(archive, box, "javac.jsa")
        elif name == "python_packages":
            for package in PYTHON_PACKAGES:
                found = importlib.util.find_spec(package)
                if found is not None and found.submodule_search_locations:
                    _link_tree(Path(next(iter(found.submodule_search_locations))), box, package)
        elif name == "go_cache":
            warm = _go_cache()
            if warm is not None:
                _link_tree(warm, box, ".gocache")
        else:
            raise ValueError(f"unknown harness support {name!r}; known: {', '.join(SUPPORTS)}")


def _digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()[:12]


@functools.cache
def _alloc_shim() -> Path:
    compiler = shutil.which("cc", path=SAFE_PATH) or shutil.which("gcc", path=SAFE_PATH)
    if compiler is None:
        raise RuntimeError("alloc_shim needs a C compiler (cc or gcc): apt-get install gcc")
    target = cache_dir() / f"alloc_shim-{_digest(SHIM_SOURCE.read_bytes())}.so"
    if not target.is_file():
        _build(target, [compiler, "-O2", "-shared", "-fPIC", "-o", "{out}", str(SHIM_SOURCE)])
    return target


def _pch_flags(compile_argv: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """The compile step's compiler and flags (without its output, sources, objects and ``-include-pch``),
    and the name of the precompiled header it reads."""
    flags, skip, pch = [], None, CPP_HEADER.name + ".gch"
    for arg in compile_argv:
        if skip == "-include-pch":
            pch = arg
        if skip:
            skip = None
        elif arg in ("-o", "-include-pch"):
            skip = arg
        elif not arg.endswith((".cpp", ".cc", ".cxx", ".o")):
            flags.append(arg)
    return tuple(flags) or ("g++", "-O2", "-std=c++20"), pch


@functools.cache
def _cpp_pch(flags: tuple[str, ...], pch_name: str) -> tuple[Path, ...]:
    """``cpp_harness.o`` and the precompiled header ``pch_name``, built with ``flags``."""
    compiler = shutil.which(flags[0], path=SAFE_PATH)
    if compiler is None:
        raise RuntimeError(f"cpp_pch needs {flags[0]} (the harness's compiler)")
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
    source = CPP_HEADER.read_bytes()
    folder = cache_dir() / f"cpp_pch-{_digest(' '.join(flags), version, source, pch_name)}"
    header, pch, obj = folder / CPP_HEADER.name, folder / pch_name, folder / "cpp_harness.o"
    if not obj.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as work:  # no .gch beside it: the object needs the whole header
            (Path(work) / header.name).write_bytes(source)
            (Path(work) / "impl.cpp").write_text(f'#define CODERLM_HARNESS_IMPL\n#include "{header.name}"\n')
            _build(obj, [compiler, *flags[1:], "-c", "-o", "{out}", str(Path(work) / "impl.cpp")])
    if not pch.is_file():
        header.write_bytes(source)
        # clang's precompiled header names the files it read; embedded, they need not exist in the sandbox
        embed = ["-Xclang", "-fmodules-embed-all-files"] if "clang" in Path(compiler).name else []
        try:
            _build(pch, [compiler, *flags[1:], *embed, "-x", "c++-header", "-o", "{out}", str(header)])
        except RuntimeError:
            return (obj,)  # compile without it
    return obj, pch


@functools.cache
def _javac_cds() -> Path | None:
    javac = shutil.which("javac", path=SAFE_PATH)
    if javac is None:
        return None
    template = (HARNESS / "java.java").read_text()
    version = subprocess.run([javac, "-version"], capture_output=True, text=True)
    target = cache_dir() / f"javac-{_digest(template, version.stdout + version.stderr)}.jsa"
    if target.is_file():
        return target
    solution = "class Solution { public int f(int[] a) { return a.length; } }\n"
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "Solution.java").write_text(template.replace("{{SOLUTION}}", solution).replace("{{METHOD}}", "f"))
        try:
            _build(target, [javac, "-J-XX:ArchiveClassesAtExit={out}", "-d", work, str(Path(work) / "Solution.java")])
        except RuntimeError:
            return None  # compile without it
    return target if target.is_file() else None


@functools.cache
def _go_cache() -> Path | None:
    """A build cache holding the standard packages the Go harness imports, built by building it once."""
    go = shutil.which("go", path=SAFE_PATH)
    if go is None:
        return None
    template = (HARNESS / "go.go").read_text()
    version = subprocess.run([go, "version"], capture_output=True, text=True).stdout
    target = cache_dir() / f"gocache-{_digest(template, version)}"
    if target.is_dir():
        return target
    program = template.replace("{{SOLUTION}}", "func coderlmNothing() {}\n").replace("{{METHOD}}", "coderlmNothing")
    with tempfile.TemporaryDirectory() as work:
        partial = Path(work) / "gocache"
        (Path(work) / "main.go").write_text(program)
        env = {"PATH": SAFE_PATH, "HOME": work, "GOCACHE": str(partial), "GOPATH": f"{work}/gopath"}
        env |= {"GO111MODULE": "off", "GOPROXY": "off", "GOTOOLCHAIN": "local"}
        built = subprocess.run(
            [go, "build", "-o", "main", "main.go"], cwd=work, env=env, capture_output=True, text=True
        )
        if built.returncode != 0:  # e.g. a Go older than the harness needs: build cold
            return None
        for path in [partial, *partial.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(partial, target)
        except OSError:  # another worker finished first, or another file system
            if not target.is_dir():
                shutil.copytree(partial, target)
    return target


def _build(target: Path, argv: list[str]) -> None:
    """Run a build writing ``{out}``, then move the result to ``target`` atomically (readable by all)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    done = subprocess.run([a.replace("{out}", str(partial)) for a in argv], capture_output=True, text=True)
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        raise RuntimeError(f"building {target.name} failed: {done.stderr[-1000:]}")
    partial.chmod(0o644)
    os.replace(partial, target)


def _link(source: Path, box: Sandbox, name: str) -> None:
    assert box.path is not None
    target = box.path / name
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
        target.chmod(0o644)


def _link_tree(source: Path, box: Sandbox, name: str) -> None:
    """``source``'s files as links under ``box/name``; the folders are the sandbox's own (new entries may go in)."""
    assert box.path is not None
    owner = isolation()["setpriv"] is not None
    for folder, _, files in os.walk(source):
        here = box.path / name / Path(folder).relative_to(source)
        here.mkdir(parents=True, exist_ok=True)
        if owner:
            os.chown(here, NOBODY, NOBODY)
        for file in files:
            try:
                os.link(Path(folder) / file, here / file)
            except OSError:
                shutil.copyfile(Path(folder) / file, here / file)
