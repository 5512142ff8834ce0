"""CPU latency with onnxruntime."""

from __future__ import annotations

import math

import pytest
from torch import nn

pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
pytest.importorskip("onnxruntime")

from coderlm.collect.nets.latency import measure_latency
from coderlm.collect.nets.onnx_export import export_onnx, save_onnx


@pytest.fixture(scope="module")
def model():
    cnn = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2)
    )
    return export_onnx(cnn, (2, 3, 16, 16))


def test_latency_is_positive_and_honours_options(model, tmp_path):
    result = measure_latency(model, batch_size=2, warmup=2, repeats=7, threads=1)
    assert set(result) == {"median_ms", "p10_ms", "p90_ms", "repeats", "warmup", "threads", "batch_size"}
    assert math.isfinite(result["median_ms"]) and result["median_ms"] > 0
    assert result["p10_ms"] <= result["median_ms"] <= result["p90_ms"]
    assert (result["repeats"], result["warmup"], result["threads"], result["batch_size"]) == (7, 2, 1, 2)
    from_file = measure_latency(save_onnx(model, tmp_path / "m.onnx"), batch_size=2, warmup=0, repeats=3, threads=2)
    assert from_file["median_ms"] > 0 and from_file["threads"] == 2


def test_static_batch_must_match(model):
    with pytest.raises(ValueError, match=r"static batch size 2, not 4.*input_shape=\(4, \.\.\.\)"):
        measure_latency(model, batch_size=4)


def test_bad_arguments_and_files(model, tmp_path):
    with pytest.raises(ValueError, match="repeats >= 1"):
        measure_latency(model, repeats=0)
    bad = tmp_path / "junk.onnx"
    bad.write_text("not a model")
    with pytest.raises(ValueError, match=r"junk\.onnx"):
        measure_latency(bad)


def test_symbolic_batch_takes_batch_size():
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    assert measure_latency(model, batch_size=5, warmup=0, repeats=2)["batch_size"] == 5
