"""Prometheus metrics of one server: requests, latency, queue depth, batch sizes (``GET /metrics``).

Each application has its own registry (several apps in one process, as in tests, do not mix
counts). Names, all prefixed ``coderlm_``:

- ``requests_total{endpoint, status}`` and ``request_seconds{endpoint}``: every HTTP request, by route
  (``/v1/predict``, ``/v1/models``, ``/healthz``, ``/metrics``, else ``other``) and status code;
- ``inputs_total{model}``: inputs answered; ``queue_inputs{model}``: inputs waiting now;
- ``batch_inputs{model}``: inputs per sampling call (``_sum / _count`` is the mean batch);
  ``batch_unique_inputs{model}``: the distinct texts among them, which are what is decoded;
  ``batch_seconds{model}``: time per sampling call; ``batch_failures_total{model}``;
- ``process_*``: the server's memory (``process_resident_memory_bytes``), CPU time and open files.
"""

from __future__ import annotations

import time

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.process_collector import ProcessCollector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

ENDPOINTS = ("/v1/predict", "/v1/models", "/healthz", "/metrics")
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


class ModelMetrics:
    """One model's queue and batch figures (the labelled children of ``Metrics``)."""

    def __init__(self, metrics: Metrics, model: str) -> None:
        self.inputs = metrics.inputs.labels(model)
        self.queue = metrics.queue.labels(model)
        self.batch_inputs = metrics.batch_inputs.labels(model)
        self.batch_unique = metrics.batch_unique.labels(model)
        self.batch_seconds = metrics.batch_seconds.labels(model)
        self.failures = metrics.batch_failures.labels(model)

    def queued(self, inputs: int) -> None:
        self.queue.set(inputs)

    def batch(self, inputs: int, unique: int, seconds: float) -> None:
        self.inputs.inc(inputs)
        self.batch_inputs.observe(inputs)
        self.batch_unique.observe(unique)
        self.batch_seconds.observe(seconds)

    def failure(self) -> None:
        self.failures.inc()


class Metrics:
    """The registry and its metrics; ``for_model`` gives a model's, ``text`` the exposition."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("coderlm_requests", "HTTP requests", ["endpoint", "status"], registry=r)
        self.latency = Histogram(
            "coderlm_request_seconds", "HTTP request latency", ["endpoint"], buckets=LATENCY_BUCKETS, registry=r
        )
        self.inputs = Counter("coderlm_inputs", "inputs answered", ["model"], registry=r)
        self.queue = Gauge("coderlm_queue_inputs", "inputs waiting in the queue", ["model"], registry=r)
        self.batch_inputs = Histogram(
            "coderlm_batch_inputs", "inputs per sampling call", ["model"], buckets=BATCH_BUCKETS, registry=r
        )
        self.batch_unique = Histogram(
            "coderlm_batch_unique_inputs",
            "distinct inputs per sampling call",
            ["model"],
            buckets=BATCH_BUCKETS,
            registry=r,
        )
        self.batch_seconds = Histogram(
            "coderlm_batch_seconds", "seconds per sampling call", ["model"], buckets=LATENCY_BUCKETS, registry=r
        )
        self.batch_failures = Counter("coderlm_batch_failures", "sampling calls that failed", ["model"], registry=r)
        ProcessCollector(registry=r)

    def for_model(self, model: str) -> ModelMetrics:
        return ModelMetrics(self, model)

    def request(self, path: str, status: int, seconds: float) -> None:
        endpoint = path if path in ENDPOINTS else "other"
        self.requests.labels(endpoint, str(status)).inc()
        self.latency.labels(endpoint).observe(seconds)

    def text(self) -> bytes:
        return generate_latest(self.registry)


class RequestMetrics:
    """ASGI middleware: counts each HTTP request by route and status, and times it."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start, status = time.perf_counter(), 500  # 500 unless a response starts

        async def send_noting_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_noting_status)
        finally:
            self.metrics.request(scope["path"], status, time.perf_counter() - start)
