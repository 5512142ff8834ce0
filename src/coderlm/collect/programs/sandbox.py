"""Run untrusted programs: a private temporary folder, resource limits, no network, a clean kill.

Every ``Sandbox.run`` starts one process with

- its own temporary folder as working directory and ``HOME`` (removed when the sandbox closes);
- ``RLIMIT_CPU`` (CPU seconds), ``RLIMIT_AS`` (address space), ``RLIMIT_NPROC`` (processes and
  threads of the sandbox user), ``RLIMIT_FSIZE`` (largest file it may write: caps its output,
  which goes to files, not pipes), no core dumps;
- an environment holding only ``PATH``, ``HOME``, ``TMPDIR``, ``LANG`` and what the runner adds;
- when the ``unshare`` tool may create namespaces here: a fresh network namespace (only a
  loopback that is down: every connection fails) and a fresh PID namespace (when its first
  process ends, the kernel kills everything left in it: no orphan survives a fork bomb);
- when the collector runs as root: the program runs as the unprivileged user ``nobody``
  (``setpriv``), so it cannot write outside its folder and ``RLIMIT_NPROC`` applies (the kernel
  does not enforce it on root);
- a wall-clock timeout after which its whole process group is killed.

``isolation()`` says which of these are in force on this machine; results carry it.
Peak RSS and CPU time come from ``wait4``'s rusage, taken by ``rss_exec`` (a 30-line C program
built on first use with the system C compiler, cached under ``$CODERLM_CACHE`` or
``~/.cache/coderlm``): it forks the program and waits for it. The indirection matters: a process
forked straight from the collector inherits the collector's resident-set high-water mark (Linux
keeps ``maxrss`` across ``exec``), which would put a floor of the collector's size (~150 MB with
torch loaded) under every measurement. Without a C compiler the sandbox falls back to the direct
``wait4`` and results say ``rss_source: "wait4-inherited"``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

NOBODY = 65534
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclasses.dataclass(frozen=True)
class Limits:
    """Per-process limits. ``memory_mb`` None = no address-space limit (JIT runtimes reserve a lot)."""

    timeout_s: float = 10.0  # wall clock; the process group is killed after it
    cpu_s: int | None = None  # RLIMIT_CPU; default: ceil(timeout_s) + 1
    memory_mb: int | None = 2048  # RLIMIT_AS in MiB
    processes: int = 256  # RLIMIT_NPROC (counts threads too: JVMs need dozens)
    file_mb: float = 1.0  # RLIMIT_FSIZE in MiB: the largest file (stdout and stderr included) it may write

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {self.timeout_s}")
        if self.memory_mb is not None and self.memory_mb < 16:
            raise ValueError(f"memory_mb must be >= 16 or None, got {self.memory_mb}")
        if self.processes < 1:
            raise ValueError(f"processes must be >= 1, got {self.processes}")


@dataclasses.dataclass
class RunResult:
    """One finished (or killed) process.

    ``status``: ``ok`` (exit 0), ``error`` (non-zero exit), ``timeout`` (killed at the wall-clock limit),
    ``signal`` (killed by a signal, e.g. SIGKILL after RLIMIT_CPU, SIGSEGV), ``output_limit`` (wrote more
    than ``file_mb``: SIGXFSZ).
    """

    status: str
    returncode: int
    wall_s: float
    cpu_s: float
    peak_rss_bytes: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def stderr_tail(self, chars: int = 2000) -> str:
        return self.stderr[-chars:]


@functools.cache
def isolation() -> dict[str, Any]:
    """What the sandbox can enforce here: namespaces (network, pid) and the unprivileged user."""
    unshare = shutil.which("unshare")
    setpriv = shutil.which("setpriv")
    namespaces = False
    if unshare:
        try:
            probe = subprocess.run(
                [unshare, "--net", "--pid", "--fork", "--kill-child", "--", "true"], capture_output=True, timeout=10
            )
            namespaces = probe.returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            namespaces = False
    drop_user = os.geteuid() == 0 and setpriv is not None
    launcher = _build_launcher()
    return {
        "rss_source": "rss_exec" if launcher else "wait4-inherited",
        "launcher": launcher,
        "network_namespace": namespaces,
        "pid_namespace": namespaces,
        "user": "nobody" if drop_user else str(os.geteuid()),
        "nproc_enforced": drop_user or os.geteuid() != 0,
        "unshare": unshare if namespaces else None,
        "setpriv": setpriv if drop_user else None,
    }


class Sandbox:
    """A private temporary folder to write files into and run commands in; ``with Sandbox() as box:``."""

    def __init__(self, prefix: str = "coderlm-sandbox-"):
        self.prefix = prefix
        self.path: Path | None = None
        self._outputs: Path | None = None

    def __enter__(self) -> Sandbox:
        self.path = Path(tempfile.mkdtemp(prefix=self.prefix))
        self._outputs = Path(tempfile.mkdtemp(prefix=self.prefix + "out-"))  # out of the program's reach
        if isolation()["setpriv"]:
            os.chown(self.path, NOBODY, NOBODY)
        return self

    def __exit__(self, *exc: object) -> None:
        for path in (self.path, self._outputs):
            if path is not None:
                shutil.rmtree(path, ignore_errors=True)

    def write(self, name: str, text: str | bytes) -> Path:
        """Write a file into the sandbox folder (readable and writable by the sandboxed program)."""
        assert self.path is not None, "use the sandbox as a context manager"
        target = self.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode() if isinstance(text, str) else text)
        if isolation()["setpriv"]:
            os.chown(target, NOBODY, NOBODY)
        return target

    def run(
        self,
        argv: Sequence[str],
        limits: Limits = Limits(),
        *,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        isolate: bool = True,
    ) -> RunResult:
        """Run ``argv`` in the sandbox folder under ``limits``; never raises for the program's own failures."""
        assert self.path is not None and self._outputs is not None, "use the sandbox as a context manager"
        info = isolation()
        environment = {"PATH": SAFE_PATH, "HOME": str(self.path), "TMPDIR": str(self.path), "LANG": "C.UTF-8"}
        environment |= dict(env or {})
        command = list(argv)
        if isolate and info["setpriv"]:
            command = [info["setpriv"], f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *command]
        report = self._outputs / "rusage"
        report.unlink(missing_ok=True)
        if info["launcher"]:  # as the PID namespace's init: a signal to the program is delivered normally
            command = [info["launcher"], str(report), *command]
        if isolate and info["unshare"]:
            command = [info["unshare"], "--net", "--pid", "--fork", "--kill-child", "--", *command]
        out_path, err_path = self._outputs / "stdout", self._outputs / "stderr"
        cpu = limits.cpu_s if limits.cpu_s is not None else int(limits.timeout_s) + 2
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            start = time.perf_counter()
            try:
                process = subprocess.Popen(
                    command,
                    cwd=self.path,
                    env=environment,
                    stdout=out,
                    stderr=err,
                    stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                    start_new_session=True,
                    preexec_fn=functools.partial(_limit, cpu, limits.memory_mb, limits.processes, limits.file_mb),
                )
            except OSError as exc:  # the command itself is missing or not executable
                return RunResult("error", 127, 0.0, 0.0, 0, "", f"{argv[0]}: {exc}")
            timed_out = threading.Event()

            def kill() -> None:
                timed_out.set()
                _kill_group(process.pid)

            timer = threading.Timer(limits.timeout_s, kill)
            timer.start()
            if stdin is not None:
                threading.Thread(target=_feed, args=(process, stdin), daemon=True).start()
            _, wait_status, usage = _wait4(process.pid)
            wall = time.perf_counter() - start
            timer.cancel()
            process.returncode = os.waitstatus_to_exitcode(wait_status)  # reaped here, not by Popen
            _kill_group(process.pid)  # anything it left behind (without a PID namespace)
        stdout = out_path.read_bytes().decode(errors="replace")
        stderr = err_path.read_bytes().decode(errors="replace")
        cap = int(limits.file_mb * (1 << 20))
        full = max(out_path.stat().st_size, err_path.stat().st_size) >= cap
        code = process.returncode
        rss, cpu_used = int(usage.ru_maxrss) * 1024, usage.ru_utime + usage.ru_stime
        killer = -code if code < 0 else 0
        if info["launcher"]:  # rss_exec's measurement of the program alone (none when it was killed)
            fields = report.read_text().split() if report.is_file() else []
            rss, cpu_used = (int(fields[0]) * 1024, float(fields[1]) + float(fields[2])) if len(fields) == 5 else (0, 0)
            if len(fields) == 5:
                wall = float(fields[3])  # the program's own wall time, without unshare and setpriv
                killer = killer or int(fields[4])
        if timed_out.is_set():
            status = "timeout"
        elif code == 0:
            status = "ok"
        elif full or killer == signal.SIGXFSZ:  # Python ignores SIGXFSZ and fails with EFBIG instead
            status = "output_limit"
        elif killer:
            status = "signal"
        else:
            status = "error"
        return RunResult(status, code, wall, cpu_used, rss, stdout, stderr)


def _limit(cpu_s: int, memory_mb: int | None, processes: int, file_mb: float) -> None:
    """In the child, before exec: resource limits (inherited by everything it starts)."""
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    if memory_mb is not None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    size = int(file_mb * (1 << 20))
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _wait4(pid: int) -> tuple[int, int, Any]:
    while True:
        try:
            return os.wait4(pid, 0)
        except InterruptedError:
            continue


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _feed(process: subprocess.Popen, data: bytes) -> None:
    try:
        assert process.stdin is not None
        process.stdin.write(data)
        process.stdin.close()
    except (BrokenPipeError, OSError):
        pass


def _build_launcher() -> str | None:
    """Path of the compiled ``rss_exec`` (built once per source version), or None without a C compiler."""
    source = Path(__file__).with_name("rss_exec.c")
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None or not source.is_file():
        return None
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    cache = Path(os.environ.get("CODERLM_CACHE", Path.home() / ".cache" / "coderlm"))
    binary = cache / f"rss_exec-{digest}"
    if not binary.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        partial = binary.with_suffix(f".{os.getpid()}.tmp")
        build = subprocess.run([compiler, "-O2", "-o", str(partial), str(source)], capture_output=True)
        if build.returncode != 0:
            return None
        os.replace(partial, binary)
    return str(binary)
