"""A compile-and-time worker process (``inductor.py``), driven with a timeout per program.

``KernelWorker.run(job)`` sends one job and waits for its answer at most ``timeout_s`` seconds for
compiling and again for timing (not while the worker waits its turn to time).
A program that hangs is killed with its process (status ``timeout``); one that kills the process
(a segfault in generated code, the out-of-memory killer) gets status ``crashed`` with the end of
the worker's stderr; either way the next job starts a fresh worker. A worker ends within a second of
its collector, even mid-job (a killed collection leaves no process behind). Workers run with one OpenMP
thread and are replaced after ``max_jobs`` programs, so compiler caches do not grow without end.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any


class KernelWorker:
    def __init__(self, log: Path | None = None, max_jobs: int = 40, threads: int = 1) -> None:
        self.log, self.max_jobs, self.threads = log, max_jobs, threads
        self.process: subprocess.Popen | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.jobs = 0

    def run(self, job: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """The worker's answer to ``job``, or a ``timeout`` / ``crashed`` record."""
        if self.process is None or self.jobs >= self.max_jobs:
            self._restart()
        assert self.process is not None and self.process.stdin is not None
        self.jobs += 1
        try:
            self.process.stdin.write(json.dumps(job) + "\n")
            self.process.stdin.flush()
            line = self._answer(timeout_s)
        except queue.Empty:
            self.close()
            return {"status": "timeout", "stage": "any", "error": f"no answer within {timeout_s:g} s"}
        except (BrokenPipeError, OSError):
            line = None
        if line is None:  # the process ended without answering
            code = self.process.wait()
            self.process = None
            return {"status": "crashed", "stage": "any", "error": f"worker exited with {code}; {self._stderr_tail()}"}
        return json.loads(line)

    def _answer(self, timeout_s: float) -> str | None:
        """The result line; ``timeout_s`` for compiling, none while the worker waits for the timing lock
        (whoever holds it is bounded by its own timeout), then ``timeout_s`` again for timing."""
        waiting = False
        while True:
            line = self.lines.get(timeout=None if waiting else timeout_s)
            event = json.loads(line).get("event") if line is not None and line.startswith('{"event"') else None
            if event is None:
                return line
            waiting = event == "waiting"

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def _restart(self) -> None:
        self.close()
        env = os.environ | {
            "OMP_NUM_THREADS": str(self.threads),
            "MKL_NUM_THREADS": str(self.threads),
            "CODERLM_COLLECTOR_PID": str(os.getpid()),  # the worker ends when this process does
        }
        stderr: IO | int = open(self.log, "ab") if self.log is not None else subprocess.DEVNULL  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "-m", "coderlm.collect.kernels.inductor"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
        )
        if stderr is not subprocess.DEVNULL:
            stderr.close()  # the child holds its own copy
        self.lines = queue.Queue()
        threading.Thread(target=_pump, args=(self.process.stdout, self.lines), daemon=True).start()
        self.jobs = 0

    def _stderr_tail(self) -> str:
        if self.log is None or not self.log.is_file():
            return "stderr not kept"
        return self.log.read_bytes()[-600:].decode("utf-8", "replace").strip()

    def __enter__(self) -> KernelWorker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _pump(stream: IO[str], lines: queue.Queue) -> None:
    """Forward the worker's output lines; None when it ends."""
    for line in stream:
        lines.put(line)
    lines.put(None)
