"""``Client``: predictions from a ``coderlm serve`` server, in the shapes ``RegressionLM`` gives them.

    >>> client = Client("http://127.0.0.1:8000")        # api_key="..." when the server has one
    >>> client.predict(texts)                            # (n, k) medians
    >>> client.predict_interval(texts, 0.9)              # (n, k, 2)
    >>> client.predict_quantiles(texts, [0.1, 0.9])      # (n, k, 2)
    >>> client.sample(texts, num_samples=64, seed=0)     # (n, 64, k), as RegressionLM.load(RUN).sample(...)

Needs the ``serve`` extra (httpx). An error answer raises ``ServerError`` carrying its status, the
server's message and, for 503, ``retry_after``. Numbers the server sends as ``null`` (non-finite)
come back as NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from coderlm.data.checks import check_texts


class ServerError(RuntimeError):
    """An error answer: ``status`` (401, 404, 413, 422, 500, 503, ...), the server's message,
    and ``retry_after`` seconds when the server gave one (503)."""

    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        self.status, self.message, self.retry_after = status, message, retry_after
        super().__init__(f"{status}: {message}")


class Client:
    """A connection to one server; ``model``: the served model's name (default: the server's first)."""

    def __init__(
        self, url: str, *, model: str | None = None, api_key: str | None = None, timeout: float = 60.0
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model = model
        self.http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout)

    def predict(self, texts: Sequence[str], num_samples: int | None = None, seed: int | None = None) -> np.ndarray:
        """Medians (n, k) of each input's samples."""
        answer = self.request(texts, num_samples=num_samples, seed=seed)
        return _array(answer, "median")

    def predict_interval(
        self, texts: Sequence[str], level: float = 0.9, num_samples: int | None = None, seed: int | None = None
    ) -> np.ndarray:
        """Central intervals (n, k, 2) holding ``level`` of the samples."""
        answer = self.request(texts, level=level, num_samples=num_samples, seed=seed)
        return _array(answer, "interval")

    def predict_quantiles(
        self, texts: Sequence[str], q: Sequence[float], num_samples: int | None = None, seed: int | None = None
    ) -> np.ndarray:
        """Sample quantiles (n, k, len(q))."""
        answer = self.request(texts, quantiles=[float(v) for v in q], num_samples=num_samples, seed=seed)
        return _array(answer, "quantiles")

    def sample(self, texts: Sequence[str], num_samples: int | None = None, seed: int | None = None) -> np.ndarray:
        """Float64 samples (n, num_samples, k)."""
        answer = self.request(texts, return_samples=True, num_samples=num_samples, seed=seed)
        return np.moveaxis(_array(answer, "samples"), 1, 2)

    def request(self, texts: Sequence[str], **fields: Any) -> dict[str, Any]:
        """The server's answer to ``POST /v1/predict`` for ``texts``; ``fields``: the request's other fields
        (None ones left out)."""
        body = {"inputs": [{"text": text} for text in check_texts(texts)]}
        body |= {key: value for key, value in {"model": self.model, **fields}.items() if value is not None}
        return self._answer(self.http.post("/v1/predict", json=body))

    def models(self) -> list[dict[str, Any]]:
        """``GET /v1/models``: each served model's name, objectives, number format, training and evaluation."""
        return self._answer(self.http.get("/v1/models"))["models"]

    def health(self) -> dict[str, Any]:
        return self._answer(self.http.get("/healthz"))

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @staticmethod
    def _answer(response: httpx.Response) -> dict[str, Any]:
        if response.is_success:
            return response.json()
        try:
            message = response.json().get("error", response.text)
        except ValueError:
            message = response.text
        retry_after = response.headers.get("Retry-After", "")
        raise ServerError(response.status_code, message, int(retry_after) if retry_after.isdigit() else None)


def _array(answer: dict[str, Any], key: str) -> np.ndarray:
    """``answer``'s ``key`` per input and objective as float64 (n, k, ...); null -> NaN."""
    objectives = answer["objectives"]
    values = [[result[key][objective] for objective in objectives] for result in answer["results"]]
    return np.array(values, dtype=np.float64)
