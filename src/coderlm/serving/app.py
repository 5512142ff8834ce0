"""``create_app``: the FastAPI application serving trained models (docs/serving.md).

Routes: ``POST /v1/predict``, ``GET /v1/models``, ``GET /healthz``, ``GET /metrics`` (Prometheus
text), and FastAPI's ``/docs`` and ``/openapi.json``. With an API key, ``/v1/*`` and ``/metrics``
need ``Authorization: Bearer KEY`` (else 401); ``/healthz`` and the docs stay open.

Every error is JSON ``{"error": "one line"}``; a 422 names the field (``inputs[0].text: ...``) and
adds FastAPI's ``detail`` list. Codes: 401 no or wrong key, 404 unknown model, 413 too many inputs
or bytes, 422 a malformed request, 500 the model failed on this request's batch (the server goes
on), 501 ``onnx_base64`` without the onnx extra, 503 the model's queue is full (``Retry-After``).
"""

from __future__ import annotations

import hmac
import math
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Annotated

import numpy as np
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from coderlm import __version__
from coderlm.decoding.estimates import central_interval, point_estimate, quantiles
from coderlm.serving.batcher import Batcher, BatchFailedError, QueueFullError
from coderlm.serving.config import ServeConfig
from coderlm.serving.inputs import InputError, OnnxUnavailableError, input_texts, text_bytes
from coderlm.serving.limits import BodyLimit
from coderlm.serving.metrics import Metrics, RequestMetrics
from coderlm.serving.models import ServedModel
from coderlm.serving.schemas import Health, InputResult, ModelsResponse, PredictRequest, PredictResponse

# ``Authorization: Bearer KEY``, read here and checked by ``_key_check``'s dependency (documented at /docs)
BEARER = HTTPBearer(auto_error=False, description="the server's API key (--api-key or CODERLM_API_KEY)")


def create_app(
    models: dict[str, ServedModel], config: ServeConfig | None = None, api_key: str | None = None
) -> FastAPI:
    """The application for ``models`` (by name; the first is the default). ``api_key``: required when given."""
    if not models:
        raise ValueError("no model to serve")
    config = config or ServeConfig()
    metrics = Metrics()
    batchers = {
        name: Batcher(
            model.sample,
            name=name,
            max_batch=config.max_batch,
            max_wait_s=config.max_wait_ms / 1000,
            queue_size=config.queue_size,
            metrics=metrics.for_model(name),
        )
        for name, model in models.items()
    }

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        for batcher in batchers.values():
            batcher.start()
        yield
        for batcher in batchers.values():  # after uvicorn has let in-flight requests finish
            await batcher.stop()

    app = FastAPI(
        title="coderlm",
        version=__version__,
        summary="Predict what code costs before it runs: numbers with uncertainty from a Regression Language Model.",
        lifespan=lifespan,
    )
    app.add_middleware(BodyLimit, max_bytes=config.max_request_bytes)
    app.add_middleware(RequestMetrics, metrics=metrics)  # outermost: counts the 413s too
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    authorized = [Depends(_key_check(api_key))]

    @app.post("/v1/predict", response_model=PredictResponse, dependencies=authorized)
    async def predict(request: PredictRequest) -> PredictResponse:
        """Samples each input; gives per objective the median and, when asked, intervals, quantiles, samples."""
        name = request.model or next(iter(models))
        if name not in models:
            raise HTTPException(404, f"model {name!r} is not served; served: {list(models)}")
        if len(request.inputs) > config.max_inputs:
            message = f"{len(request.inputs)} inputs is over the limit of {config.max_inputs} (--max-inputs)"
            raise HTTPException(413, message)
        model = models[name]
        num_samples = request.num_samples or model.rlm.num_samples
        if request.point == "exact":  # one decode per input, no samples: the batcher's calls with num_samples 0
            asked = [f for f in ("num_samples", "level", "quantiles") if getattr(request, f) is not None]
            asked += ["return_samples"] if request.return_samples else []
            if asked:
                raise _invalid("point", "exact gives the median alone (no samples): drop " + ", ".join(asked))
            num_samples = 0
        if num_samples > config.max_samples:
            raise _invalid("num_samples", f"must be <= {config.max_samples} (--max-samples), got {num_samples}")
        try:
            texts = await input_texts(request.inputs, config.onnx_style)
        except InputError as exc:
            raise _invalid(f"inputs.{exc.index}.{exc.field}", str(exc)) from exc
        except OnnxUnavailableError as exc:
            raise HTTPException(501, str(exc)) from exc
        size = text_bytes(texts)
        if size > config.max_request_bytes:
            message = f"the inputs' texts hold {size} bytes, over the limit of {config.max_request_bytes}"
            raise HTTPException(413, message + " (--max-request-bytes)")
        try:
            samples = await batchers[name].submit(texts, num_samples, request.seed)
        except QueueFullError as exc:
            raise HTTPException(503, str(exc), headers={"Retry-After": str(exc.retry_after)}) from exc
        except BatchFailedError as exc:
            raise HTTPException(500, str(exc)) from exc
        return _response(request, model, num_samples, samples)

    @app.get("/v1/models", response_model=ModelsResponse, dependencies=authorized)
    async def list_models() -> ModelsResponse:
        """The served models, the default first: objectives, number format, training summary, evaluation."""
        return ModelsResponse(models=[model.info() for model in models.values()])

    @app.get("/healthz", response_model=Health)
    async def health() -> Health:
        """Up and serving these models."""
        return Health(status="ok", models=list(models))

    @app.get("/metrics", dependencies=authorized, response_class=Response)
    async def prometheus_metrics() -> Response:
        """Prometheus text format: requests, latency, queue depth, batch sizes, memory."""
        return Response(metrics.text(), media_type=metrics.content_type)

    return app


def _response(request: PredictRequest, model: ServedModel, num_samples: int, samples: np.ndarray) -> PredictResponse:
    """Per input and objective: the median, and the interval, quantiles and samples asked for."""
    objectives = model.objectives
    per_input: dict[str, np.ndarray] = {"median": point_estimate(samples)}  # (n, k)
    if request.level is not None:
        per_input["interval"] = central_interval(samples, request.level)  # (n, k, 2)
    if request.quantiles is not None:
        per_input["quantiles"] = quantiles(samples, np.asarray(request.quantiles))  # (n, k, q)
    if request.return_samples:
        per_input["samples"] = np.moveaxis(samples, 2, 1)  # (n, k, S)
    results = [
        InputResult(**{key: dict(zip(objectives, _numbers(array[i]), strict=True)) for key, array in per_input.items()})
        for i in range(len(samples))
    ]
    return PredictResponse(
        model=model.name,
        objectives=objectives,
        num_samples=num_samples,
        level=request.level,
        quantiles=request.quantiles,
        seed=request.seed,
        results=results,
    )


def _numbers(values: np.ndarray) -> list:
    """Floats with NaN and ±inf as None, nested as ``values`` is."""
    return _finite(values.tolist())


def _finite(values: list) -> list:
    return [_finite(v) if isinstance(v, list) else (v if math.isfinite(v) else None) for v in values]


def _key_check(api_key: str | None):
    """A dependency refusing requests without ``Authorization: Bearer <api_key>`` (none without a key)."""

    async def check(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)]) -> None:
        if api_key is None:
            return
        if credentials is None or not hmac.compare_digest(credentials.credentials.encode(), api_key.encode()):
            message = "missing or wrong API key (send the header Authorization: Bearer KEY)"
            raise HTTPException(401, message, {"WWW-Authenticate": "Bearer"})

    return check


def _invalid(field: str, message: str) -> RequestValidationError:
    """A 422 naming ``field`` (dotted, as in the body), like FastAPI's own."""
    return RequestValidationError([{"loc": ("body", *field.split(".")), "msg": message, "type": "value_error"}])


def field_name(loc: Sequence) -> str:
    """FastAPI's error location -> the field as written in the body: ``("body", "inputs", 0, "text")`` ->
    ``inputs[0].text``."""
    parts = list(loc[1:] if loc and loc[0] == "body" else loc)
    name = ""
    for part in parts:
        if isinstance(part, int) or str(part).isdigit():
            name += f"[{part}]"
        else:
            name += f".{part}" if name else str(part)
    return name or "body"


async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = exc.errors()
    lines = []
    for error in errors:
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        if error.get("type") == "json_invalid":
            where = f" at character {error['loc'][-1]}" if len(error.get("loc", ())) > 1 else ""
            context = error.get("ctx", {}).get("error", "")
            lines.append(f"body: not valid JSON{where}" + (f" ({context})" if context else ""))
        elif message.startswith(f"{field_name(error.get('loc', ()))}: "):
            lines.append(message)  # already names its field
        else:
            lines.append(f"{field_name(error.get('loc', ()))}: {message}")
    detail = [{k: v for k, v in error.items() if k in ("loc", "msg", "type")} for error in errors]
    return JSONResponse({"error": "; ".join(lines), "detail": detail}, status_code=422)


async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)
