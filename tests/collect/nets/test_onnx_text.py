"""ONNX graph -> canonical text."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxscript")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from coderlm.collect.nets.nb201 import build_network  # noqa: E402
from coderlm.collect.nets.onnx_cost import graph_cost  # noqa: E402
from coderlm.collect.nets.onnx_export import export_onnx  # noqa: E402
from coderlm.collect.nets.onnx_text import format_number, onnx_to_text  # noqa: E402

CELL_A = "|nor_conv_3x3~0|+|none~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_1x1~1|nor_conv_3x3~2|"
CELL_B = "|nor_conv_1x1~0|+|none~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_1x1~1|nor_conv_3x3~2|"
CELL_ZERO = "|none~0|+|none~0|none~1|+|skip_connect~0|none~1|nor_conv_1x1~2|"


def export(cell: str, seed: int) -> onnx.ModelProto:
    torch.manual_seed(seed)
    return export_onnx(build_network(cell, cells_per_stage=1))


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return {
        "a0": onnx_to_text(export(CELL_A, 0)),
        "a1": onnx_to_text(export(CELL_A, 1)),
        "b": onnx_to_text(export(CELL_B, 0)),
        "zero": onnx_to_text(export(CELL_ZERO, 0)),
    }


def test_same_cell_same_text_different_cell_different_text(texts):
    assert texts["a0"] == texts["a1"]  # different random weights, byte-identical text
    assert texts["a0"] != texts["b"]


def test_every_line_has_a_known_shape(texts):
    for text in texts.values():
        assert "?" not in text
        lines = text.splitlines()
        assert lines[:3] == ["onnx opset=18 dtype=f32", "input x0 [1,3,32,32]", "output y0 [1,10]"]
        for line in lines[3:]:
            assert re.fullmatch(r"\w+ = \w+(\[.*\])?\(.*\)  # (i64)?\[[\d,]*\]", line), line
        assert lines[-1].startswith("y0 = Gemm[transB=1](")


def test_no_exporter_names_or_weight_values(texts):
    for text in texts.values():
        for leaked in ("/", "cells", "stem", "getitem", "conv2d", "node_", "val_", "weight", "running", "linear"):
            assert leaked not in text
        identifiers = set(re.findall(r"\b[a-z]\w*\d\b", text)) - {"opset"}
        assert all(re.fullmatch(r"[xytw]\d+", name) or name in ("f32", "i64") for name in identifiers), identifiers
        for literal in re.findall(r"\{([^}]*)\}", text):
            assert len(literal.split(",")) <= 8


def test_small_weights_show_no_values():
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3), torch.nn.Flatten(), torch.nn.Linear(12, 4)
    )
    text = onnx_to_text(export_onnx(net, (1, 2, 2, 2)))
    assert "w1[3]" in text and "w7[4]" in text  # the conv bias, BN statistics and linear bias are named weights
    assert set(re.findall(r"(\w+\[[\d,]*\])\{", text)) == {"i64[2]"}  # the only literal: the flatten shape


def test_none_edges_and_dead_branches_stay_in_the_graph(texts):
    # NAS-Bench-201 computes a `none` edge as x * 0, so the all-`none` node is two Mul lines, not a constant
    assert texts["zero"].count("= Mul(") == 4 * 3 and "Expand" not in texts["zero"]
    assert all("f32[]{0})" in line for line in texts["zero"].splitlines() if "= Mul(" in line)
    # node 1 reaches the output only through `none` edges: its conv still runs, so it stays in the text
    dead = "|nor_conv_3x3~0|+|none~0|none~1|+|skip_connect~0|none~1|none~2|"
    net = build_network(dead, cells_per_stage=1)
    model = export_onnx(net)
    convs = sum(isinstance(m, torch.nn.Conv2d) for m in net.modules())
    assert onnx_to_text(model).count("= Conv") == convs == 1 + 3 + 2 * 3  # stem, cells, reductions
    assert graph_cost(model)["params"] == sum(p.numel() for p in net.parameters())


def small_graph(order: list[int], prefix: str) -> onnx.ModelProto:
    """x -> Relu -> a; x -> Conv(stride 2, default attrs spelled out) -> b; Add(a, pooled b); node order given."""
    n = [
        helper.make_node("Relu", ["x"], [prefix + "a"]),
        helper.make_node(
            "Conv",
            ["x", prefix + "W"],
            [prefix + "b"],
            strides=[2, 2],
            group=1,
            dilations=[1, 1],
            auto_pad="NOTSET",
            kernel_shape=[1, 1],
        ),
        helper.make_node("Resize", [prefix + "b", "", prefix + "scales"], [prefix + "c"], mode="linear"),
        helper.make_node("Add", [prefix + "a", prefix + "c"], ["y"]),
    ]
    weight = numpy_helper.from_array(np.ones((3, 3, 1, 1), np.float32), prefix + "W")
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), prefix + "scales")
    graph = helper.make_graph(
        [n[i] for i in order],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [weight, scales],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_text_depends_on_structure_not_names_or_node_order():
    first = onnx_to_text(small_graph([0, 1, 2, 3], "p_"))
    assert first == onnx_to_text(small_graph([1, 2, 0, 3], "q/"))
    assert first.splitlines()[3:] == [
        "t0 = Relu(x0)  # [1,3,4,4]",
        "t1 = Conv[strides=[2,2]](x0, w0[3,3,1,1])  # [1,3,2,2]",
        't2 = Resize[mode="linear"](t1, _, w1[4])  # [1,3,4,4]',  # float tensors are weights, even 4 scales
        "y0 = Add(t0, t2)  # [1,3,4,4]",
    ]


def test_missing_shapes_are_reported():
    node = helper.make_node("Mystery", ["x"], ["m"], domain="my.ops")
    graph = helper.make_graph(
        [node, helper.make_node("Relu", ["m"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("my.ops", 1)])
    with pytest.raises(ValueError, match=r"no shape for tensor .*'m'"):
        onnx_to_text(model)
    text = onnx_to_text(model, allow_missing_shapes=True)
    assert "t0 = my.ops::Mystery(x0)  # ?" in text


def test_constant_nodes_and_dtypes():
    nodes = [
        helper.make_node("Constant", [], ["shape"], value=numpy_helper.from_array(np.array([2, 6], np.int64))),
        helper.make_node("Constant", [], ["big"], value=numpy_helper.from_array(np.zeros((2, 6), np.float32))),
        helper.make_node("Reshape", ["x", "shape"], ["r"]),
        helper.make_node("Add", ["r", "big"], ["s"]),
        helper.make_node("Shape", ["s"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
    )
    text = onnx_to_text(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    assert text.splitlines()[2:] == [
        "output y0 i64[2]",
        "t0 = Reshape(x0, i64[2]{2,6})  # [2,6]",
        "t1 = Add(t0, w0[2,6])  # [2,6]",
        "y0 = Shape(t1)  # i64[2]",
    ]


def test_other_styles(texts):
    model = export(CELL_A, 0)
    printed = onnx_to_text(model, style="onnx")
    assert "stem" in printed and len(printed) < 0.1 * len(model.SerializeToString())
    minimal = onnx_to_text(model, style="minimal")
    assert len(minimal) < 0.8 * len(texts["a0"])
    assert "w[16,3,3,3])  # [1,16,32,32]" in minimal and "t2 = Relu(t1)\n" in minimal
    with pytest.raises(ValueError, match="unknown style"):
        onnx_to_text(model, style="pretty")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3, "3"),
        (-7, "-7"),
        (1e-5, "1e-05"),
        (2.5e-4, "0.00025"),
        (0.9, "0.9"),
        (1.0, "1"),
        (0.0, "0"),
        (1e10, "1e+10"),
        (3e-7, "3e-07"),
    ],
)
def test_format_number(value, text):
    assert format_number(value) == text
