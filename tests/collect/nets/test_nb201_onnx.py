"""NB201 graphs built directly are the graphs torch's exporter gives: same proto, same text, same cost."""

from __future__ import annotations

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
ort = pytest.importorskip("onnxruntime")

from coderlm.collect.nets import TEXT_STYLES  # noqa: E402
from coderlm.collect.nets.collect import sample_cells  # noqa: E402
from coderlm.collect.nets.latency import measure_latency  # noqa: E402
from coderlm.collect.nets.nb201 import OPS, build_network, format_cell  # noqa: E402
from coderlm.collect.nets.nb201_onnx import OPSET, build_onnx, count_convs  # noqa: E402
from coderlm.collect.nets.onnx_cost import graph_cost  # noqa: E402
from coderlm.collect.nets.onnx_export import DEFAULT_OPSET, export_onnx  # noqa: E402
from coderlm.collect.nets.onnx_text import onnx_to_text  # noqa: E402

EVERY_OP = "|nor_conv_3x3~0|+|none~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_1x1~1|nor_conv_3x3~2|"
RANDOM = sample_cells(6, seed=21)  # fixed: sample_cells is seeded
# (cell, cells_per_stage, batch_size, build_network's num_classes and stem_channels): every op on every
# edge (the 5 one-op cells), 6 mixed cells (one at batch 2, one at other sizes), the full 5 cells per stage
CASES = [
    *[(format_cell([op] * 6), 1, 1, 10, 16) for op in OPS],
    *[(cell, 1, 1, 10, 16) for cell in RANDOM[:4]],
    (RANDOM[4], 1, 2, 10, 16),
    (RANDOM[5], 1, 1, 7, 8),
    (EVERY_OP, 5, 1, 10, 16),
]
IDS = [f"{i}-cps{cps}-b{batch}" for i, (_, cps, batch, _, _) in enumerate(CASES)]


def _build(case: tuple) -> onnx.ModelProto:
    cell, cps, batch, classes, channels = case
    return build_onnx(cell, cps, batch, num_classes=classes, stem_channels=channels)


@pytest.fixture(scope="module")
def exported():
    """case -> export_onnx(build_network(...)), each exported once (seconds each) and shared by the tests."""
    cache: dict[tuple, onnx.ModelProto] = {}

    def get(case: tuple) -> onnx.ModelProto:
        if case not in cache:
            cell, cps, batch, classes, channels = case
            torch.manual_seed(0)
            network = build_network(cell, num_classes=classes, stem_channels=channels, cells_per_stage=cps)
            cache[case] = export_onnx(network, (batch, 3, 32, 32))
        return cache[case]

    return get


def _without_weight_values(model: onnx.ModelProto) -> bytes:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for tensor in copy.graph.initializer:
        if tensor.data_type == onnx.TensorProto.FLOAT:
            tensor.ClearField("raw_data")
    return copy.SerializeToString(deterministic=True)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_same_proto_as_the_export_but_weight_values(case, exported):
    built = _build(case)
    onnx.checker.check_model(built, full_check=True)
    assert _without_weight_values(built) == _without_weight_values(exported(case))
    assert [i.name for i in built.graph.initializer] == [i.name for i in exported(case).graph.initializer]


@pytest.mark.parametrize("style", TEXT_STYLES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_same_text_in_every_style(case, style, exported):
    assert onnx_to_text(_build(case), style) == onnx_to_text(exported(case), style)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_same_cost(case, exported):
    cost = graph_cost(_build(case))
    assert cost == graph_cost(exported(case))
    cell, cps, _, classes, channels = case
    network = build_network(cell, num_classes=classes, stem_channels=channels, cells_per_stage=cps)
    assert cost["params"] == sum(p.numel() for p in network.parameters())


def test_computes_what_the_pytorch_module_computes():
    """The built weights, loaded into build_network's module by name, give the same outputs in onnxruntime."""
    model = build_onnx(EVERY_OP, cells_per_stage=1, batch_size=2, seed=3)
    network = build_network(EVERY_OP, cells_per_stage=1)
    weights = {i.name: torch.from_numpy(onnx.numpy_helper.to_array(i).copy()) for i in model.graph.initializer}
    missing, unexpected = network.load_state_dict(weights, strict=False)
    assert all(name.endswith("num_batches_tracked") for name in missing)
    assert all(name.startswith("val_") for name in unexpected)  # the exporter's shape constants
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": x})
    with torch.no_grad():
        expected = network(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)


def test_latency_runs_on_the_built_model():
    result = measure_latency(build_onnx(EVERY_OP, cells_per_stage=1, batch_size=2), batch_size=2, warmup=1, repeats=3)
    assert result["median_ms"] > 0


def test_weights_follow_the_seed_and_never_the_text():
    a, b, c = build_onnx(EVERY_OP, 1), build_onnx(EVERY_OP, 1), build_onnx(EVERY_OP, 1, seed=1)
    assert a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)
    assert a.graph.initializer[0].raw_data != c.graph.initializer[0].raw_data
    assert _without_weight_values(a) == _without_weight_values(c)


def test_counts_and_constants():
    assert OPSET == DEFAULT_OPSET
    assert count_convs(EVERY_OP, 5) == 1 + 6 + 3 * 5 * 3
    assert count_convs(format_cell(["none"] * 6), 1) == 7


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("|bogus~0|+|none~0|none~1|+|none~0|none~1|none~2|", 1), "unknown op 'bogus'"),
        ((EVERY_OP, 0), "cells_per_stage must be >= 1"),
        ((EVERY_OP, 1, 0), "batch_size must be >= 1"),
    ],
)
def test_bad_arguments_raise(args, message):
    with pytest.raises(ValueError, match=message):
        build_onnx(*args)
