"""``serve``: run an application with uvicorn on a socket bound here, until SIGTERM or SIGINT.

The socket is bound (and listening) before the server starts, so the address can be announced
at once, also for ``--port 0`` (a free port chosen by the system); connections made before the
models are ready wait in the backlog. On SIGTERM or SIGINT uvicorn stops accepting connections,
lets in-flight requests finish (up to ``shutdown_timeout`` seconds), then the application's
workers finish what is queued and the process ends normally (exit status 0).
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable

import uvicorn
from fastapi import FastAPI

BACKLOG = 2048
SIGNALS = (signal.SIGINT, signal.SIGTERM)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (IPv4 or IPv6; port 0: any free port)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    sock.listen(BACKLOG)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def serve(
    app: FastAPI,
    sock: socket.socket,
    shutdown_timeout: float = 30.0,
    access_log: bool = False,
    on_stop: Callable[[str], None] | None = None,
) -> None:
    """Serve ``app`` on ``sock`` until SIGTERM/SIGINT, then shut down gracefully; ``on_stop`` gets the signal's name."""
    config = uvicorn.Config(
        app,
        log_level="info" if access_log else "warning",
        access_log=access_log,
        timeout_graceful_shutdown=shutdown_timeout,
        backlog=BACKLOG,
    )
    server = uvicorn.Server(config)
    received: list[int] = []
    # uvicorn handles the signal, then raises it again once shut down: these handlers take that second one
    previous = {sig: signal.signal(sig, lambda number, frame: received.append(number)) for sig in SIGNALS}
    try:
        server.run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
    if received and on_stop is not None:
        on_stop(signal.Signals(received[0]).name)
