"""``coderlm serve``: trained models behind an HTTP API, with micro-batching and limits.

Modules (the ``serve`` extra: fastapi, uvicorn, prometheus-client; nothing outside this package
and ``coderlm.client`` imports them):

- ``config``: ``ServeConfig``, the limits and batching options (each one a ``coderlm serve`` flag).
- ``models``: ``ServedModel``, a loaded model: its name, its description and its sampling call.
- ``batcher``: ``Batcher``, one model's bounded queue and the worker that samples it in micro-batches.
- ``schemas``: the request and response bodies (pydantic), which FastAPI checks and documents.
- ``inputs``: a request's inputs -> the texts a model reads (``.onnx`` graphs as the collector writes them).
- ``metrics``: the Prometheus registry and the middleware counting requests.
- ``limits``: the middleware refusing request bodies over the size limit.
- ``app``: ``create_app``, the FastAPI application: routes, authentication, errors.
- ``server``: ``serve``, running the application with uvicorn until SIGTERM/SIGINT.

docs/serving.md describes the API.
"""
