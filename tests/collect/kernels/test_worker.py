"""A kernel worker does not outlive the collector that started it."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PARENT = """
import json, sys, time
from coderlm.collect.kernels.worker import KernelWorker

worker = KernelWorker()
hangs = "def get_init_inputs():\\n    return []\\n\\n\\n"
hangs += "class Model:\\n    def __init__(self):\\n        while True:\\n            pass\\n"
worker._restart()
print(worker.process.pid, flush=True)
worker.run({"source": hangs, "program": "hangs", "time": False}, timeout_s=600)
"""


def _ended(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    try:
        return "\nState:\tZ" in status.read_text()  # a zombie nobody reaps has ended too
    except FileNotFoundError:
        return True


def test_a_worker_busy_with_a_job_ends_when_its_collector_is_killed():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    worker = int(parent.stdout.readline())
    time.sleep(8.0)  # the worker imports torch and starts the job that never ends
    assert not _ended(worker)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 20.0
    while not _ended(worker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _ended(worker), "the worker outlived its collector"
