"""``coderlm serve`` as a real server (a subprocess on a free local port): results, batching, limits, errors."""

from __future__ import annotations

import base64
import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest

from coderlm import RegressionLM
from coderlm.data.toy import line_count_task
from coderlm.decoding import central_interval, point_estimate, quantiles
from tests.serving.conftest import TEXTS, single_thread


def predict(server, **body) -> httpx.Response:
    return server.http.post("/v1/predict", json=body)


def test_a_seeded_request_equals_sampling_in_process(server, model_dir):
    body = {"inputs": [{"text": t} for t in TEXTS], "num_samples": 16, "seed": 5, "level": 0.8, "quantiles": [0.1, 0.5]}
    answer = predict(server, **body, return_samples=True).raise_for_status().json()
    with single_thread():
        samples = RegressionLM.load(model_dir).sample(TEXTS, 16, seed=5)  # (4, 16, 1)

    assert answer["model"] == "tiny" and answer["objectives"] == ["y0"] and answer["seed"] == 5
    results = answer["results"]
    got = np.array([[r["samples"]["y0"]] for r in results]).transpose(0, 2, 1)
    np.testing.assert_array_equal(got, samples)
    np.testing.assert_array_equal([[r["median"]["y0"]] for r in results], point_estimate(samples))
    np.testing.assert_array_equal([[r["interval"]["y0"]] for r in results], central_interval(samples, 0.8))
    np.testing.assert_array_equal([[r["quantiles"]["y0"]] for r in results], quantiles(samples, np.array([0.1, 0.5])))


def test_an_exact_request_gets_the_walked_median(server, model_dir):
    """``point: exact``: the in-process ``predict(point="exact")``, concurrent requests batched."""
    body = {"inputs": [{"text": t} for t in TEXTS], "point": "exact"}
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: predict(server, **body).raise_for_status().json(), range(4)))
    with single_thread():
        exact = RegressionLM.load(model_dir).predict(TEXTS, point="exact")
    for answer in answers:
        assert answer["num_samples"] == 0 and answer["results"][0]["interval"] is None
        got = [[r["median"]["y0"]] for r in answer["results"]]
        np.testing.assert_allclose(got, exact, rtol=1e-5)  # batched with other requests: float32 noise


def test_an_onnx_input_is_read_as_the_collector_writes_it(server, tmp_path):
    onnx = pytest.importorskip("onnx")
    from coderlm.collect.nets.onnx_export import load_onnx, save_onnx
    from coderlm.collect.nets.onnx_text import onnx_to_text

    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4])
    graph = onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
    path = save_onnx(
        onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)]), tmp_path / "n.onnx"
    )
    encoded = base64.b64encode(path.read_bytes()).decode()
    text = onnx_to_text(load_onnx(path), style="compact")

    from_onnx = predict(server, inputs=[{"onnx_base64": encoded}], seed=1, return_samples=True)
    from_text = predict(server, inputs=[{"text": text}], seed=1, return_samples=True)
    assert from_onnx.status_code == 200 and from_onnx.json()["results"] == from_text.json()["results"]
    corrupt = predict(server, inputs=[{"onnx_base64": base64.b64encode(b"not onnx").decode()}])
    assert corrupt.status_code == 422 and corrupt.json()["error"].startswith("inputs[0].onnx_base64: not a valid ONNX")


def test_concurrent_requests_are_batched_and_each_gets_its_own_rows(server):
    texts, _ = line_count_task(24, seed=3)
    batches_before = server.metric("coderlm_batch_inputs_count", model="model")
    with ThreadPoolExecutor(len(texts)) as pool:
        answers = list(pool.map(lambda t: predict(server, inputs=[{"text": t}], model="model", num_samples=8), texts))

    assert [a.status_code for a in answers] == [200] * len(texts)
    assert all(a.json()["model"] == "model" and len(a.json()["results"]) == 1 for a in answers)
    batches = server.metric("coderlm_batch_inputs_count", model="model") - batches_before
    assert batches < len(texts)  # some requests shared a sampling call


def test_identical_inputs_are_decoded_once(server):
    inputs_before = server.metric("coderlm_batch_inputs_sum", model="tiny")
    unique_before = server.metric("coderlm_batch_unique_inputs_sum", model="tiny")
    answer = predict(server, inputs=[{"text": t} for t in TEXTS], num_samples=8, return_samples=True).json()
    samples = [r["samples"]["y0"] for r in answer["results"]]
    assert samples[0] == samples[2]  # TEXTS[0] == TEXTS[2]: the same draws
    assert server.metric("coderlm_batch_inputs_sum", model="tiny") - inputs_before == 4
    assert server.metric("coderlm_batch_unique_inputs_sum", model="tiny") - unique_before == 3


def test_interval_quantiles_and_samples_come_only_when_asked(server):
    plain = predict(server, inputs=[{"text": "x = 1\n"}]).json()
    assert plain["num_samples"] == 64 and plain["level"] is None and plain["quantiles"] is None
    result = plain["results"][0]
    assert set(result["median"]) == {"y0"} and result["interval"] is None and result["samples"] is None
    full = predict(server, inputs=[{"text": "x = 1\n"}], num_samples=4, level=0.5, return_samples=True).json()
    lower, upper = full["results"][0]["interval"]["y0"]
    assert lower <= upper and len(full["results"][0]["samples"]["y0"]) == 4


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "inputs: Field required"),
        ({"inputs": []}, "inputs: List should have at least 1 item"),
        ({"inputs": [{"text": ""}]}, "inputs[0].text: String should have at least 1 character"),
        ({"inputs": [{"txt": "x"}]}, "inputs[0].txt: Extra inputs are not permitted"),
        ({"inputs": [{"text": "x", "onnx_base64": "AA=="}]}, "inputs[0]: give exactly one of"),
        ({"inputs": [{"text": "x"}], "num_samples": 0}, "num_samples: Input should be greater than or equal to 1"),
        ({"inputs": [{"text": "x"}], "num_samples": 257}, "num_samples: must be <= 256 (--max-samples)"),
        ({"inputs": [{"text": "x"}], "level": 1.5}, "level: Input should be less than 1"),
        ({"inputs": [{"text": "x"}], "quantiles": [0.5, 2]}, "quantiles[1]: Input should be less than or equal to 1"),
        ({"inputs": [{"text": "x"}], "sed": 1}, "sed: Extra inputs are not permitted"),
        ({"inputs": [{"text": "x"}], "point": "mean"}, "point: Input should be 'median' or 'exact'"),
        ({"inputs": [{"text": "x"}], "point": "exact", "level": 0.9}, "point: exact gives the median alone"),
    ],
)
def test_a_malformed_request_gets_422_naming_the_field(server, body, field):
    answer = predict(server, **body)
    assert answer.status_code == 422
    assert answer.json()["error"].startswith(field), answer.json()["error"]
    assert answer.json()["detail"]


def test_invalid_json_gets_422(server):
    answer = server.http.post("/v1/predict", content=b'{"inputs": [', headers={"content-type": "application/json"})
    assert answer.status_code == 422 and answer.json()["error"].startswith("body: not valid JSON at character")


def test_too_many_inputs_or_bytes_get_413(server):
    nine = predict(server, inputs=[{"text": f"x = {i}\n"} for i in range(9)])
    assert nine.status_code == 413 and "over the limit of 8 (--max-inputs)" in nine.json()["error"]
    big = json.dumps({"inputs": [{"text": "x" * 20_000}]}).encode()
    announced = server.http.post("/v1/predict", content=big, headers={"content-type": "application/json"})
    assert announced.status_code == 413 and "over the limit of 20000 bytes" in announced.json()["error"]
    chunks = (big[i : i + 4096] for i in range(0, len(big), 4096))  # no Content-Length: chunked
    streamed = server.http.post("/v1/predict", content=chunks, headers={"content-type": "application/json"})
    assert streamed.status_code == 413 and "more than 20000 bytes" in streamed.json()["error"]
    small = json.dumps({"inputs": [{"text": "x = 1\n"}]}).encode()
    assert server.http.post(
        "/v1/predict", content=iter([small]), headers={"content-type": "application/json"}
    ).is_success


def test_an_unknown_model_gets_404(server):
    answer = predict(server, inputs=[{"text": "x"}], model="nope")
    assert (
        answer.status_code == 404 and answer.json()["error"] == "model 'nope' is not served; served: ['tiny', 'model']"
    )
    assert server.http.get("/v2/nothing").status_code == 404


def test_models_health_metrics_and_docs(server, model_dir):
    (model_dir / "train_summary.json").write_text(json.dumps({"data": "train.jsonl", "fit_report": {}}))
    (model_dir / "report").mkdir(exist_ok=True)
    (model_dir / "report" / "metrics.json").write_text(json.dumps({"all": {"y0": {"spearman": 0.5}}}))
    models = server.http.get("/v1/models").json()["models"]
    assert [m["name"] for m in models] == ["tiny", "model"]
    tiny = models[0]
    assert tiny["objectives"] == ["y0"] and tiny["number_format"]["kind"] == "p10" and tiny["parameters"] > 0
    assert tiny["training"]["examples"] == 64 and tiny["train_summary"] == {"data": "train.jsonl"}
    assert tiny["evaluation"]["metrics"] == {"all": {"y0": {"spearman": 0.5}}}

    assert server.http.get("/healthz").json() == {"status": "ok", "models": ["tiny", "model"]}
    assert server.metric("coderlm_requests_total", endpoint="/v1/models", status="200") >= 1
    assert server.metric("process_resident_memory_bytes") > 0
    assert server.http.get("/openapi.json").json()["paths"].keys() >= {"/v1/predict", "/v1/models", "/healthz"}
    assert server.http.get("/docs").status_code == 200
