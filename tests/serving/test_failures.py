"""``coderlm serve`` under failure: no API key, a full queue, a failing model, SIGTERM with requests in flight."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.serving.conftest import Server

KEY = {"Authorization": "Bearer s3cret"}


@pytest.fixture(scope="module")
def guarded(model_dir):
    """API key from the environment; a queue of 4 inputs whose first input waits 800 ms for company
    (requests stay queued long enough to fill it); sampling fails on inputs holding FAULT."""
    limits = ["--queue-size", "4", "--max-inputs", "4", "--max-wait-ms", "800"]
    started = Server("--model", str(model_dir), *limits, fail_on="FAULT", env={"CODERLM_API_KEY": "s3cret"})
    yield started
    started.stop()


def post(server: Server, headers=KEY, **body) -> httpx.Response:
    return server.http.post("/v1/predict", json=body, headers=headers)


def wait_until_queued(server: Server, inputs: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while server.metric("coderlm_queue_inputs", headers=KEY, model="model") != inputs:
        assert time.monotonic() < deadline, f"never {inputs} inputs queued"
        time.sleep(0.01)


def test_without_the_api_key_requests_get_401(guarded):
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        answer = post(guarded, headers=headers, inputs=[{"text": "x"}])
        assert answer.status_code == 401 and answer.headers["WWW-Authenticate"] == "Bearer"
        assert "API key" in answer.json()["error"]
        assert guarded.http.get("/v1/models", headers=headers).status_code == 401
        assert guarded.http.get("/metrics", headers=headers).status_code == 401
    assert guarded.http.get("/healthz").status_code == 200  # probes need no key
    assert post(guarded, inputs=[{"text": "x = 1\n"}], num_samples=2).status_code == 200


def test_a_full_queue_answers_503_with_retry_after_and_recovers(guarded):
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(post, guarded, inputs=[{"text": f"x = {i}\n"} for i in range(4)], num_samples=2)
        wait_until_queued(guarded, 4)
        refused = post(guarded, inputs=[{"text": "y = 1\n"}], num_samples=2)
        assert first.result().status_code == 200
    assert refused.status_code == 503 and int(refused.headers["Retry-After"]) >= 1
    assert "would overflow the queue of 4 (--queue-size)" in refused.json()["error"]
    assert post(guarded, inputs=[{"text": "y = 1\n"}], num_samples=2).status_code == 200


def test_a_model_error_fails_its_batch_only_and_the_server_goes_on(guarded):
    with ThreadPoolExecutor(2) as pool:
        failing = pool.submit(post, guarded, inputs=[{"text": "FAULT = 1\n"}], num_samples=2)
        wait_until_queued(guarded, 1)
        seeded = pool.submit(post, guarded, inputs=[{"text": "x = 1\n"}], num_samples=2, seed=0)  # its own call
        failed, fine = failing.result(), seeded.result()
    assert failed.status_code == 500
    assert failed.json()["error"] == "model 'model' failed: RuntimeError: injected fault: an input contains 'FAULT'"
    assert fine.status_code == 200
    assert post(guarded, inputs=[{"text": "x = 2\n"}], num_samples=2).status_code == 200
    assert guarded.metric("coderlm_batch_failures_total", headers=KEY, model="model") == 1


def test_sigterm_lets_in_flight_requests_finish(model_dir):
    server = Server("--model", str(model_dir), "--max-wait-ms", "1500")  # a lone input waits 1.5 s in the queue
    with ThreadPoolExecutor(1) as pool:
        in_flight = pool.submit(server.http.post, "/v1/predict", json={"inputs": [{"text": "x = 1\n"}]})
        deadline = time.monotonic() + 10
        while server.metric("coderlm_queue_inputs", model="model") != 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        server.terminate()
        answer = in_flight.result(timeout=30)
    assert answer.status_code == 200 and len(answer.json()["results"]) == 1
    status, printed = server.stop()
    assert status == 0 and "coderlm serve: stopped on SIGTERM" in printed
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{server.url}/healthz")
