"""Exact compute and parameter counts of an ONNX graph, from ONNX-inferred shapes.

``graph_cost(model)`` returns:

- ``macs``: multiply-accumulates of the ops that multiply matrices, for the graph's own
  batch size:

  - ``Conv``: output elements x (C_in / groups) x prod(kernel), i.e. ``prod(Y.shape) * prod(W.shape[1:])``;
  - ``ConvTranspose``: input elements x (C_out / groups) x prod(kernel), ``prod(X.shape) * prod(W.shape[1:])``;
  - ``Gemm``: M x N x K; ``MatMul``: output elements x K (batch dimensions broadcast).

  Bias additions are not counted. This is the convention behind NAS-Bench-201's "FLOPs"
  column (e.g. 220.12 M for the all-``nor_conv_3x3`` network is our ``macs``).
- ``flops``: ``2 * macs`` (one multiply and one add per MAC); nothing else is included.
- ``elementwise``: output elements of the cheap ops in ``ELEMENTWISE_OPS`` (activations,
  arithmetic, normalization, pooling, reductions, softmax), one per element; reported
  separately and never added to ``flops``.
- ``params``: elements of floating-point initializers (and ``Constant`` nodes) of rank >= 1
  (the floating-point weights of ``onnx_text``), except BatchNormalization running mean
  and variance (inputs 4 and 5), which are ``buffers``. For a PyTorch export this equals
  ``sum(p.numel() for p in module.parameters())`` over the modules the graph uses (the
  exporter drops dead branches). Scalars and integer tensors (shapes, axes) are constants.
- ``unknown_ops``: sorted op types that are in none of the tables here; their cost is not
  counted, so a non-empty list means ``macs``/``flops``/``elementwise`` are lower bounds.
- ``ops``: number of nodes of each op type.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import onnx

from coderlm.collect.nets.onnx_text import infer_shapes, is_literal

MAC_OPS = frozenset({"Conv", "ConvTranspose", "Gemm", "MatMul"})
ELEMENTWISE_OPS = frozenset(
    {
        *("Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Gelu", "Erf", "Elu", "Selu"),
        *("Softplus", "Softsign", "Clip", "Mish", "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Reciprocal", "Exp"),
        *("Log", "Neg", "Abs", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Less", "Greater", "Not", "And", "Or"),
        *("BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization"),
        *("LpNormalization", "Softmax", "LogSoftmax", "AveragePool", "MaxPool", "LpPool", "GlobalAveragePool"),
        *("GlobalMaxPool", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2"),
        *("ReduceSumSquare", "ReduceLogSumExp", "Dropout", "Resize", "Upsample", "CumSum", "ArgMax", "ArgMin"),
    }
)
FREE_OPS = frozenset(
    {
        *("Identity", "Constant", "ConstantOfShape", "Shape", "Size", "Cast", "CastLike", "Reshape", "Flatten"),
        *("Squeeze", "Unsqueeze", "Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements", "Expand"),
        *("Tile", "Pad", "Range", "DepthToSpace", "SpaceToDepth"),
    }
)
_BN_BUFFER_INPUTS = (3, 4)  # running mean, running variance


def _numel(shape: tuple[Any, ...] | None, what: str) -> int:
    if shape is None or any(not isinstance(d, int) for d in shape):
        raise ValueError(f"{what} has no static shape ({shape}); graph_cost needs every dimension known")
    return int(np.prod(shape, dtype=np.int64))


def _node_macs(node: onnx.NodeProto, shapes: dict[str, Any]) -> int:
    def shape(position: int, outputs: bool = False) -> tuple[int, ...]:
        names = node.output if outputs else node.input
        name = names[position] if position < len(names) else ""
        value = shapes.get(name, (0, None))[1]
        _numel(value, f"tensor {name!r} ({'output' if outputs else 'input'} {position} of a {node.op_type} node)")
        return value

    def prod(dims: tuple[int, ...]) -> int:
        return int(np.prod(dims, dtype=np.int64))

    a, b = shape(0), shape(1)  # inputs first, so a missing shape is reported where it starts
    y = shape(0, outputs=True)
    if node.op_type == "Conv":  # Y elements x (C_in / groups) x kernel
        return prod(y) * prod(b[1:])
    if node.op_type == "ConvTranspose":  # X elements x (C_out / groups) x kernel
        return prod(a) * prod(b[1:])
    if node.op_type == "MatMul":  # Y elements x K
        return prod(y) * int(a[-1])
    trans_a = next((attr.i for attr in node.attribute if attr.name == "transA"), 0)  # Gemm: Y[M,N] = A'[M,K] B'[K,N]
    return prod(y) * int(a[0 if trans_a else 1])


def graph_cost(model: onnx.ModelProto) -> dict[str, Any]:
    """``macs``, ``flops``, ``elementwise``, ``params``, ``buffers``, ``unknown_ops`` and ``ops`` of ``model``."""
    graph = model.graph
    shapes = infer_shapes(model)
    tensors: dict[str, tuple[int, tuple[int, ...]]] = {i.name: (i.data_type, tuple(i.dims)) for i in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and node.output[0] in shapes:
            elem, dims = shapes[node.output[0]]
            if dims is not None:
                tensors.setdefault(node.output[0], (elem, dims))
    buffer_names = {
        node.input[i]
        for node in graph.node
        if node.op_type == "BatchNormalization"
        for i in _BN_BUFFER_INPUTS
        if i < len(node.input)
    }
    floating = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE, onnx.TensorProto.BFLOAT16}
    params = buffers = 0
    for name, (elem, dims) in tensors.items():
        if elem not in floating or is_literal(elem, dims):  # the tensors onnx_text writes as weights
            continue
        if name in buffer_names:
            buffers += int(np.prod(dims, dtype=np.int64))
        else:
            params += int(np.prod(dims, dtype=np.int64))

    macs = elementwise = 0
    unknown: set[str] = set()
    ops = Counter[str]()
    for node in graph.node:
        op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"
        ops[op] += 1
        if op in MAC_OPS:
            macs += _node_macs(node, shapes)
        elif op in ELEMENTWISE_OPS:
            name = node.output[0]
            elementwise += _numel(shapes.get(name, (0, None))[1], f"tensor {name!r} (output of {op} node)")
        elif op not in FREE_OPS:
            unknown.add(op)
    return {
        "macs": macs,
        "flops": 2 * macs,
        "elementwise": elementwise,
        "params": params,
        "buffers": buffers,
        "unknown_ops": sorted(unknown),
        "ops": dict(sorted(ops.items())),
    }
