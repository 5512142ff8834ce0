"""Load on ``coderlm serve``: concurrent async clients on loopback, micro-batching on and off, overload.

    python bench/serve_load.py --json out/serve_load.json          # trains a small model first (about 30 s)
    python bench/serve_load.py --model runs/a --data data/test.jsonl --seconds 20

The model is ``--model RUN``, or without it a small one trained here on the built-in line-count
task (``coderlm.data.toy.line_count_task``: short programs, target their number of lines;
``--dim`` wide, ``--train-steps`` steps). The inputs are a pool of distinct texts (``--data``'s,
else new line-count programs); clients take them in turn, so a batch holds distinct inputs.
Rows, each measured for ``--seconds``:

* ``offline``: ``RegressionLM.predict`` in this process on the whole pool, repeatedly (inputs/s).
* ``serve``, ``max_batch`` = ``--max-batch`` (micro-batching) and 1 (off): ``--clients`` closed-loop
  clients (1, 8, 32, 128), each sending one request of one input at a time (``--num-samples``).
  Latency is per request, as the client sees it; the batch sizes come from the server's /metrics.
* ``overload``: a server with a small queue (``--overload-queue`` inputs) first at 32 clients
  (``before``), then offered 4x the sustainable input rate (the micro-batching row at 32 clients)
  open-loop, in requests of ``--overload-inputs`` inputs (``overload``), then 32 clients again
  (``recovery``). The server's resident memory is given before and after.

``errors`` counts failed requests other than 503 (other status codes, timeouts, refused
connections); ``status_503`` the requests refused for a full queue. Server and clients share the
machine: on few cores the load generator's own CPU use lowers every serving row.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import itertools
import json
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import numpy as np
import torch
from prometheus_client.parser import text_string_to_metric_families

from coderlm import RegressionLM
from coderlm.data import read_dataset
from coderlm.data.toy import line_count_task
from coderlm.evaluation import markdown_table

COLUMNS = ["method", "phase", "max_batch", "clients", "inputs_per_s", "requests_per_s", "p50_ms", "p95_ms", "p99_ms"]
COLUMNS += ["errors", "status_503", "mean_batch", "batch_hist", "vs_offline", "rss_mb"]


def train_default_model(folder: Path, dim: int, steps: int) -> Path:
    """A small model on the line-count task, saved in ``folder``."""
    texts, targets = line_count_task(2000, seed=0)
    heads = max(1, dim // 16)
    model = {"encoder_dim": dim, "decoder_dim": dim, "encoder_heads": heads, "decoder_heads": heads}
    rlm = RegressionLM(vocab_size=512, max_input_len=256, model=model, training={"steps": steps, "progress": False})
    return rlm.fit(texts, targets).save(folder)


def offline_row(model_dir: Path, texts: list[str], num_samples: int, seconds: float, per_call: int = 0) -> dict:
    """In-process ``predict`` on all of ``texts``, repeated for ``seconds`` (after one warm-up call):
    in one call (``per_call`` 0: the model batches as it does offline) or ``per_call`` inputs a call."""
    rlm = RegressionLM.load(model_dir)
    point = {"num_samples": num_samples} if num_samples else {"point": "exact"}  # 0: the exact median
    rlm.predict(texts[:32], **point)
    size = per_call if per_call > 0 else len(texts)
    calls = [texts[i : i + size] for i in range(0, len(texts), size)]
    inputs, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for call in calls:
            rlm.predict(call, **point)
            inputs += len(call)
            if time.perf_counter() - start >= seconds:
                break
    row = {"method": "offline", "phase": "-", "inputs_per_s": inputs / (time.perf_counter() - start)}
    return row | ({"max_batch": per_call} if per_call > 0 else {})


class ServerProcess:
    """``coderlm serve`` in a subprocess on a free local port; its figures from /metrics."""

    def __init__(self, model_dir: Path, *flags: str) -> None:
        command = [sys.executable, "-m", "coderlm.cli", "serve", "--model", str(model_dir), "--port", "0", *flags]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("coderlm serve: http://"):
            raise RuntimeError(f"coderlm serve did not start (exit {self.process.wait()}): {line!r}")
        self.url = line.split()[2]
        deadline = time.monotonic() + 120
        while not self._healthy():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.url}/healthz did not answer")
            time.sleep(0.1)

    def _healthy(self) -> bool:
        try:
            return httpx.get(f"{self.url}/healthz").status_code == 200
        except httpx.TransportError:
            return False

    def metrics(self) -> dict[tuple[str, str], float]:
        """(sample name, its ``le`` label or "") -> value, for the batch histogram and memory."""
        values = {}
        for family in text_string_to_metric_families(httpx.get(f"{self.url}/metrics").text):
            for sample in family.samples:
                values[sample.name, sample.labels.get("le", "")] = sample.value
        return values

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(60)


@contextmanager
def server(model_dir: Path, *flags: str):
    process = ServerProcess(model_dir, *flags)
    try:
        yield process
    finally:
        process.stop()


class Load:
    """Requests of a run: latencies of the answered ones, status counts, inputs answered."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.statuses: dict[int, int] = {}
        self.failures = 0  # timeouts, refused or dropped connections
        self.inputs = 0

    async def send(self, client: httpx.AsyncClient, texts: list[str], num_samples: int) -> None:
        point = {"num_samples": num_samples} if num_samples else {"point": "exact"}  # 0: the exact median
        body = {"inputs": [{"text": t} for t in texts], **point}
        start = time.perf_counter()
        try:
            response = await client.post("/v1/predict", json=body)
        except httpx.HTTPError:
            self.failures += 1
            return
        self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
        if response.status_code == 200:
            self.latencies.append(time.perf_counter() - start)
            self.inputs += len(texts)

    def row(self, seconds: float) -> dict:
        answered = self.statuses.get(200, 0)
        latencies = np.array(self.latencies or [np.nan]) * 1000
        return {
            "inputs_per_s": self.inputs / seconds,
            "requests_per_s": answered / seconds,
            "p50_ms": float(np.percentile(latencies, 50)),
            "p95_ms": float(np.percentile(latencies, 95)),
            "p99_ms": float(np.percentile(latencies, 99)),
            "requests": answered,
            "errors": self.failures + sum(n for s, n in self.statuses.items() if s not in (200, 503)),
            "status_503": self.statuses.get(503, 0),
        }


def http_client(url: str, connections: int) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.AsyncClient(base_url=url, limits=limits, timeout=120)


async def closed_loop(url: str, clients: int, seconds: float, pool, num_samples: int) -> dict:
    """``clients`` clients, each sending its next request when the last is answered, for ``seconds``."""
    load, deadline = Load(), time.perf_counter() + seconds

    async def client_loop(client: httpx.AsyncClient) -> None:
        while time.perf_counter() < deadline:
            await load.send(client, [next(pool)], num_samples)

    start = time.perf_counter()
    async with http_client(url, clients) as client:
        await asyncio.gather(*(client_loop(client) for _ in range(clients)))
    return load.row(time.perf_counter() - start)


async def open_loop(url: str, inputs_per_s: float, per_request: int, seconds: float, pool, num_samples: int) -> dict:
    """Requests of ``per_request`` inputs sent at a fixed rate, whether or not earlier ones were answered."""
    load, interval = Load(), per_request / inputs_per_s
    tasks, start = [], time.perf_counter()
    async with http_client(url, 1024) as client:
        for i in itertools.count():
            due = start + i * interval
            if due - start >= seconds:
                break
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            tasks.append(asyncio.create_task(load.send(client, [next(pool) for _ in range(per_request)], num_samples)))
        offered = len(tasks) * per_request / (time.perf_counter() - start)
        await asyncio.gather(*tasks)
    return load.row(time.perf_counter() - start) | {"offered_inputs_per_s": offered}


def measured(process: ServerProcess, run, **fields) -> dict:
    """``run()``'s row with the server's batch-size histogram over it, and its memory after."""
    before = process.metrics()
    row = asyncio.run(run())
    after = process.metrics()
    count = after["coderlm_batch_inputs_count", ""] - before.get(("coderlm_batch_inputs_count", ""), 0)
    total = after["coderlm_batch_inputs_sum", ""] - before.get(("coderlm_batch_inputs_sum", ""), 0)
    cumulative = {
        le: after[name, le] - before.get((name, le), 0)
        for name, le in after
        if name == "coderlm_batch_inputs_bucket" and le != "+Inf"
    }
    below, hist = 0.0, []
    for le, n in sorted(cumulative.items(), key=lambda item: float(item[0])):
        if n > below:
            hist.append(f"<={float(le):g}:{int(n - below)}")
        below = n
    rss = after["process_resident_memory_bytes", ""] / 2**20
    mean = total / count if count else None
    return {"method": "serve", **fields, **row, "mean_batch": mean, "batch_hist": " ".join(hist), "rss_mb": rss}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, help="run folder or saved model (default: train a small one here)")
    parser.add_argument("--data", help="dataset whose texts are the inputs (default: line-count programs)")
    parser.add_argument("--pool", type=int, default=512, help="distinct inputs the clients cycle through")
    parser.add_argument("--dim", type=int, default=64, help="width of the model trained without --model")
    parser.add_argument("--train-steps", type=int, default=300, help="its training steps")
    parser.add_argument(
        "--num-samples", type=int, default=64, help="samples per input; 0: the exact median (point exact), no samples"
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="time measured per row")
    parser.add_argument("--clients", default="1,8,32,128", help="concurrent clients per row (comma-separated)")
    parser.add_argument("--max-batch", type=int, default=64, help="micro-batch of the batching rows")
    parser.add_argument("--max-wait-ms", type=float, default=5.0, help="the server's --max-wait-ms")
    parser.add_argument("--threads", type=int, help="torch threads, offline and in the server (default: each's own)")
    parser.add_argument("--overload-queue", type=int, default=64, help="queue (inputs) of the overload server")
    parser.add_argument("--overload-inputs", type=int, default=4, help="inputs per request under overload")
    parser.add_argument(
        "--offline-batches",
        default="1,8,32",
        help="also time in-process predict at these inputs per call (comma-separated; '' for none): "
        "what batching can give at most on this machine, before any HTTP",
    )
    parser.add_argument("--json", type=Path, help="write {'results': [...]} here")
    args = parser.parse_args()
    clients = [int(c) for c in args.clients.split(",")]
    threads = ["--threads", str(args.threads)] if args.threads else []
    if args.threads:
        torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as scratch:
        model_dir = args.model
        if model_dir is None:
            print(f"training a {args.dim}-wide model on the line-count task, {args.train_steps} steps", file=sys.stderr)
            model_dir = train_default_model(Path(scratch) / "model", args.dim, args.train_steps)
        if args.data:
            texts = list(dict.fromkeys(example.text for example in read_dataset(args.data)))[: args.pool]
        else:
            texts = list(dict.fromkeys(line_count_task(args.pool, seed=1, max_lines=24)[0]))
        rows = [offline_row(model_dir, texts, args.num_samples, args.seconds) | {"threads": torch.get_num_threads()}]
        print(f"offline: {rows[0]['inputs_per_s']:.1f} inputs/s", file=sys.stderr)
        for per_call in [int(b) for b in args.offline_batches.split(",") if b]:
            rows.append(offline_row(model_dir, texts, args.num_samples, args.seconds, per_call))
            print(f"offline, {per_call} input(s) a call: {rows[-1]['inputs_per_s']:.1f} inputs/s", file=sys.stderr)
        pool = itertools.cycle(texts)
        samples = args.num_samples

        for max_batch in (args.max_batch, 1):
            flags = ["--max-batch", str(max_batch), "--max-wait-ms", str(args.max_wait_ms), *threads]
            with server(model_dir, *flags) as process:
                asyncio.run(closed_loop(process.url, 8, 1.0, pool, samples))  # warm-up
                for n in clients:
                    run = functools.partial(closed_loop, process.url, n, args.seconds, pool, samples)
                    rows.append(measured(process, run, phase="closed", max_batch=max_batch, clients=n))
                    print(json.dumps(rows[-1]), file=sys.stderr)

        sustainable = next(
            (r["inputs_per_s"] for r in rows if r.get("max_batch") == args.max_batch and r.get("clients") == 32),
            next(r["inputs_per_s"] for r in rows if r["method"] == "serve"),
        )
        queue = max(args.overload_queue, args.overload_inputs)
        flags = ["--max-batch", str(args.max_batch), "--max-wait-ms", str(args.max_wait_ms), *threads]
        flags += ["--queue-size", str(queue), "--max-inputs", str(args.overload_inputs)]
        with server(model_dir, *flags) as process:
            asyncio.run(closed_loop(process.url, 8, 1.0, pool, samples))  # warm-up
            rss_start = process.metrics()["process_resident_memory_bytes", ""] / 2**20
            fields = {"max_batch": args.max_batch, "clients": 32}
            before = functools.partial(closed_loop, process.url, 32, args.seconds, pool, samples)
            rows.append(measured(process, before, phase="before", **fields) | {"rss_mb_start": rss_start})
            rate, per = 4 * sustainable, args.overload_inputs
            overload = functools.partial(open_loop, process.url, rate, per, args.seconds, pool, samples)
            rows.append(measured(process, overload, phase="overload", max_batch=args.max_batch, clients="open"))
            rows.append(measured(process, before, phase="recovery", **fields))
            for row in rows[-3:]:
                print(json.dumps(row), file=sys.stderr)

    offline = rows[0]["inputs_per_s"]
    for row in rows:
        row["vs_offline"] = row["inputs_per_s"] / offline
        row["samples"] = args.num_samples  # 0: the exact median
    print(markdown_table(rows, COLUMNS, floatfmt=".1f"))
    print_checks(rows, args.max_batch)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"results": rows}, indent=2) + "\n")


def print_checks(rows: list[dict], max_batch: int) -> None:
    """The issue's figures: batching vs not at 32 clients, vs offline, errors, overload and recovery."""

    def row(phase: str, batch: int, clients) -> dict | None:
        found = [r for r in rows if r.get("phase") == phase and r.get("max_batch") == batch and r["clients"] == clients]
        return found[0] if found else None

    one = next((r for r in rows if r["method"] == "offline" and r.get("max_batch") == 1), None)
    if one:
        gain = rows[0]["inputs_per_s"] / one["inputs_per_s"]
        print(f"in-process: one predict call on all inputs gives {gain:.1f}x the inputs/s of one input a call")
    on, off = row("closed", max_batch, 32), row("closed", 1, 32)
    if on and off:
        print(
            f"32 clients: micro-batching {on['inputs_per_s'] / off['inputs_per_s']:.1f}x the inputs/s of --max-batch 1"
        )
        print(f"32 clients: micro-batching at {on['vs_offline']:.0%} of offline predict")
    failed = sum(r["errors"] + r["status_503"] for r in rows if r.get("phase") == "closed" and r["clients"] <= 32)
    print(f"failed requests in the 1-32 client rows: {failed}")
    before, overload, recovery = (
        row(p, max_batch, c) for p, c in (("before", 32), ("overload", "open"), ("recovery", 32))
    )
    if before and overload and recovery:
        o = overload
        print(f"overload: offered {o['offered_inputs_per_s']:.0f} inputs/s, served {o['inputs_per_s']:.0f} inputs/s")
        print(f"overload: {o['status_503']} x 503, {o['errors']} other errors")
        print(f"overload: server RSS {before['rss_mb_start']:.0f} MB before, {o['rss_mb']:.0f} MB after")
        print(
            f"recovery: {recovery['inputs_per_s'] / before['inputs_per_s']:.0%} of the throughput before the overload"
        )


if __name__ == "__main__":
    main()
