"""``coderlm serve``: trained models behind an HTTP API with micro-batching and limits (docs/serving.md).

Needs the ``serve`` extra (fastapi, uvicorn, prometheus-client), loaded only when the command runs.
Prints the address once listening (``--port 0`` picks a free port), serves until SIGTERM or SIGINT,
then lets in-flight requests finish and exits with status 0.
"""

from __future__ import annotations

import argparse
import os

import torch

from coderlm.cli.flags import add_flags, dataclass_options
from coderlm.serving.config import ServeConfig

API_KEY_VARIABLE = "CODERLM_API_KEY"
SERVE_FLAGS = dataclass_options(ServeConfig)


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="serve trained models over HTTP (POST /v1/predict; docs at /docs)",
        description="Serve trained models over HTTP: POST /v1/predict, GET /v1/models, GET /healthz, "
        "GET /metrics (Prometheus), OpenAPI docs at /docs. Requests are queued per model and sampled "
        "in micro-batches. Needs the serve extra.",
    )
    p.add_argument(
        "--model",
        required=True,
        action="append",
        metavar="[NAME=]RUN",
        help="run folder or saved model, named NAME (default: the folder's name); repeat it to serve "
        "several; the first answers requests that name none",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0: any free port, printed)")
    p.add_argument(
        "--api-key",
        help=f"require 'Authorization: Bearer KEY' on /v1/* and /metrics (default: ${API_KEY_VARIABLE} if set, "
        "else no key)",
    )
    p.add_argument(
        "--threads",
        type=int,
        help="torch threads for sampling (default: the cores but one, at least 1: the event loop answering "
        "HTTP keeps a core, and sampling threads that share cores with it stall)",
    )
    p.add_argument("--device", default="cpu", help="torch device: cpu, cuda or auto (default: cpu)")
    p.add_argument("--access-log", action="store_true", help="log every request")
    add_flags(p, SERVE_FLAGS, "limits and batching")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        # the serve extra, loaded only by this command
        from coderlm.serving.app import create_app
        from coderlm.serving.models import load_models
        from coderlm.serving.server import bind, serve, url_of
    except ImportError as exc:
        raise ValueError(f"coderlm serve needs the serve extra (pip install 'coderlm[serve]'): {exc}") from exc
    config = ServeConfig(**{o.name: getattr(args, o.name) for o in SERVE_FLAGS if getattr(args, o.name) is not None})
    if args.threads is not None and args.threads < 1:
        raise ValueError(f"--threads must be >= 1, got {args.threads}")
    models = load_models(args.model, config.batch_size, args.device)
    torch.set_num_threads(args.threads or default_threads())
    app = create_app(models, config, api_key=args.api_key or os.environ.get(API_KEY_VARIABLE) or None)
    sock = bind(args.host, args.port)
    url = url_of(sock)
    print(f"coderlm serve: {url} (models: {', '.join(models)}; API docs: {url}/docs)", flush=True)
    serve(app, sock, config.shutdown_timeout, args.access_log, on_stop=_stopped)
    return 0


def default_threads() -> int:
    """The cores this process may use, but one (at least 1)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores - 1)


def _stopped(signal_name: str) -> None:
    print(f"coderlm serve: stopped on {signal_name}", flush=True)
