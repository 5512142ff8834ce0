"""Exact MACs, FLOPs and parameters from ONNX graphs, checked against hand counts."""

from __future__ import annotations

import pytest
import torch
from torch import nn

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxscript")

from onnx import TensorProto, helper  # noqa: E402

from coderlm.collect.nets.nb201 import build_network  # noqa: E402
from coderlm.collect.nets.onnx_cost import graph_cost  # noqa: E402
from coderlm.collect.nets.onnx_export import export_onnx  # noqa: E402


def n_params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def test_single_conv():
    conv = nn.Conv2d(3, 8, 3, padding=1)
    cost = graph_cost(export_onnx(conv, (1, 3, 8, 8)))
    assert cost["macs"] == (8 * 8 * 8) * (3 * 3 * 3) == 13_824  # output elements x C_in x kH x kW
    assert cost["flops"] == 2 * 13_824
    assert cost["params"] == 8 * 3 * 3 * 3 + 8 == n_params(conv)
    assert cost["elementwise"] == 0 and cost["buffers"] == 0 and cost["unknown_ops"] == []


def test_single_linear():
    linear = nn.Linear(16, 4)
    cost = graph_cost(export_onnx(linear, (1, 16)))
    assert cost["macs"] == 16 * 4
    assert cost["params"] == 16 * 4 + 4 == n_params(linear)
    assert cost["ops"] == {"Gemm": 1}


def test_small_cnn():
    cnn = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 10))
    cost = graph_cost(export_onnx(cnn, (2, 3, 8, 8)))
    conv = 2 * (4 * 8 * 8) * (3 * 3 * 3)  # batch 2
    linear = 2 * 64 * 10
    assert cost["macs"] == conv + linear == 15_104
    assert cost["flops"] == 2 * cost["macs"]
    assert cost["elementwise"] == 2 * 4 * 8 * 8 + 2 * 4 * 4 * 4  # ReLU outputs + MaxPool outputs
    assert cost["params"] == n_params(cnn) == 112 + 650


def test_nas_bench_201_network_matches_pytorch_parameters():
    torch.manual_seed(0)
    cell = "|nor_conv_3x3~0|+|nor_conv_1x1~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"
    net = build_network(cell, cells_per_stage=1)
    cost = graph_cost(export_onnx(net))
    assert cost["params"] == n_params(net)
    bn = [m for m in net.modules() if isinstance(m, nn.BatchNorm2d)]
    assert cost["buffers"] == sum(m.running_mean.numel() + m.running_var.numel() for m in bn)
    assert cost["ops"]["BatchNormalization"] == len(bn)
    convs = [m for m in net.modules() if isinstance(m, nn.Conv2d)]
    assert cost["ops"]["Conv"] == len(convs)
    assert cost["unknown_ops"] == []


def custom_op_model(nodes: list) -> onnx.ModelProto:
    """A graph x[3, 3] -> y (shape unknown) over ``nodes``, importing the custom domain ``my.ops``."""
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("my.ops", 1)])


def test_unknown_ops_are_listed_not_counted():
    nodes = [
        helper.make_node("MatMul", ["x", "x"], ["m"]),
        helper.make_node("Einsum", ["m", "m"], ["e"], equation="ij,jk->ik"),
        helper.make_node("Mystery", ["e"], ["y"], domain="my.ops"),
    ]
    model = custom_op_model(nodes)
    cost = graph_cost(model)
    assert cost["macs"] == 3 * 3 * 3
    assert cost["unknown_ops"] == ["Einsum", "my.ops::Mystery"]


def test_missing_shape_of_a_counted_op_names_the_tensor():
    nodes = [helper.make_node("Mystery", ["x"], ["m"], domain="my.ops"), helper.make_node("MatMul", ["m", "x"], ["y"])]
    model = custom_op_model(nodes)
    with pytest.raises(ValueError, match="tensor 'm'"):
        graph_cost(model)


@pytest.mark.slow
def test_largest_nas_bench_201_network():
    """The all-nor_conv_3x3 network: NAS-Bench-201 reports ~1.53 M parameters and ~220.1 M (multiply-add) FLOPs."""
    net = build_network(
        "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|"
    )
    cost = graph_cost(export_onnx(net))
    stage = 5 * 6 * 1024 * 16 * 16 * 9  # 30 convs per stage; every stage costs the same
    reductions = 2 * (
        256 * 32 * 16 * 9 + 256 * 32 * 32 * 9 + 256 * 32 * 16
    )  # conv_a, conv_b, shortcut (same per block)
    assert cost["macs"] == 1024 * 16 * 27 + 3 * stage + reductions + 640 == 220_119_680
    assert cost["params"] == n_params(net) == 1_531_546
