"""A tiny trained model on disk, and ``coderlm serve`` run as a real server in a subprocess."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import torch
from prometheus_client.parser import text_string_to_metric_families

from coderlm import RegressionLM
from coderlm.data.toy import line_count_task

ROOT = Path(__file__).parents[2]  # the repository: tests.faults is importable from here
TEXTS = ["x = 1\n", "a = 2\nb = 3\n", "x = 1\n", "q = 7\nr = 8\ns = 9\n"]  # one repeated
TINY = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory) -> Path:
    """A saved tiny model, in a folder named ``model``."""
    texts, targets = line_count_task(64, seed=0)
    rlm = RegressionLM(vocab_size=300, model=TINY, training={"steps": 20, "batch_size": 16, "progress": False})
    return rlm.fit(texts, targets).save(tmp_path_factory.mktemp("serving") / "model")


@contextmanager
def single_thread() -> Iterator[None]:
    """Sample in process with one torch thread, as the test servers do (``--threads 1``): same arithmetic."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class Server:
    """``coderlm serve ARGS --port 0 --threads 1`` in a subprocess, ready once ``/healthz`` answers.

    ``fail_on``: sampling raises for inputs holding this marker (``tests/faults.py``). What the server
    prints (stdout and stderr) is read as it comes into ``lines``, so its pipe never fills up."""

    def __init__(self, *args: str, fail_on: str | None = None, env: dict | None = None) -> None:
        launch = ["coderlm.cli"] if fail_on is None else ["tests.faults", "fail-on", fail_on]
        self.terminated = False  # terminate() sent the SIGTERM
        self.process = subprocess.Popen(
            [sys.executable, "-m", *launch, "serve", "--port", "0", "--threads", "1", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
            env={**os.environ, **(env or {})},
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.url = self._announced_url(timeout=60)
        self.http = httpx.Client(base_url=self.url, timeout=30)
        self._wait_ready(timeout=60)

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)  # the server closed its output: it has ended

    def _announced_url(self, timeout: float) -> str:
        """The address from the line ``coderlm serve: http://HOST:PORT (...)``."""
        seen, deadline = [], time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                break
            if line is None:
                raise RuntimeError(f"coderlm serve did not start (exit {self.process.wait()}):\n{''.join(seen)}")
            if line.startswith("coderlm serve: http://"):
                return line.split()[2]
            seen.append(line)
        self.process.kill()
        raise TimeoutError(f"coderlm serve printed no address in {timeout} s:\n{''.join(seen)}")

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.http.get("/healthz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise TimeoutError(f"{self.url}/healthz did not answer in {timeout} s")

    def metric(self, name: str, headers: dict | None = None, **labels: str) -> float:
        """The value of the Prometheus sample ``name`` with these labels (0 when absent)."""
        text = self.http.get("/metrics", headers=headers).raise_for_status().text
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                    return sample.value
        return 0.0

    def terminate(self) -> None:
        """SIGTERM, once: ``stop`` then only waits (a second SIGTERM during the exit would end the process
        by the default handler, as it would any program's)."""
        self.terminated = True
        self.process.send_signal(signal.SIGTERM)

    def stop(self, timeout: float = 30) -> tuple[int, str]:
        """SIGTERM (unless ``terminate`` sent it); then the exit status and what the server printed after its
        address."""
        self.http.close()
        if self.process.poll() is None and not self.terminated:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
        self.reader.join(timeout)
        return self.process.returncode, "".join(iter(self.lines.get_nowait, None))


@pytest.fixture(scope="session")
def server(model_dir) -> Iterator[Server]:
    """Two names for the tiny model (``tiny`` first, the default; ``model`` by its folder), small limits."""
    limits = ["--max-inputs", "8", "--max-request-bytes", "20000", "--max-samples", "256", "--max-wait-ms", "50"]
    started = Server("--model", f"tiny={model_dir}", "--model", str(model_dir), *limits)
    yield started
    started.stop()
