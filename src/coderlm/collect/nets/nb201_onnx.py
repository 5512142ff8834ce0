"""NAS-Bench-201 networks built directly as ONNX, without PyTorch's exporter.

``build_onnx(cell, cells_per_stage, batch_size)`` writes the ``onnx.ModelProto`` that
``export_onnx(build_network(cell, cells_per_stage=...), (batch_size, 3, 32, 32))`` gives, in
~5 ms instead of 1.5-3.5 s. It is the same proto, not only the same text: the exporter's nodes
in its order with its node and value names (``node_Conv_228``, ``getitem_3``, ``val_175``), its
attributes in its order (default values included), initializers named after the module's
parameters and buffers, value infos, ``producer_version`` (torch's version), empty doc strings.
Only the float weights' values differ, and no text style shows them, so ``onnx_to_text(model,
style)`` is identical in every style, and so is ``graph_cost``. tests/collect/nets/test_nb201_onnx.py
compares the serialized protos (float weights cleared) with real exports; a torch or onnxscript
upgrade that changes the export fails it.

What the export (torch 2.13, onnxscript 0.7, then ``onnx_export``'s clean-up) holds, and so what
this module writes:

- torch.fx names: each aten call is named after its op with a per-op counter (``relu``,
  ``relu_1``, ...) and its node ``node_`` + that name; BatchNormalization's output is
  ``getitem_{3k}`` (the aten op returns 3 values), its node
  ``node__native_batch_norm_legit_no_training[_k]__0``.
- Counters: the exporter's node and value counters end at ``11 * convs + 4`` (5 per Conv, 6 per
  BatchNorm; the network has one BatchNorm fewer than Convs); constant folding names 3 more nodes
  per Conv (its zero bias), then the rewrite that drops the biases names the new Convs
  ``node_Conv_{14 * convs + 4}``, ... in graph order.
- Constants: ``val_3`` is the ``0.0`` made for the stem Conv's bias and reused by every ``none``
  edge's ``Mul`` (a ``Constant`` node, first in the graph, kept only when the cell has a ``none``
  edge); the global pool's axes ``[-1, -2]`` and the flatten shape ``[batch, 4C]`` are the
  initializers ``val_{11 * convs - 1}`` and ``val_{11 * convs + 3}``.
- Order: initializers are the parameters in module order, the BatchNorm running means and
  variances in module order, then those two constants; value infos are every initializer,
  then every node output but the graph's, in node order.

Weights (their values matter to latency only): Conv and Linear weights and the Linear bias
uniform in ``+-1/sqrt(fan_in)`` (torch's default initialisation), BatchNorm weight 1, bias 0,
running mean 0, running variance 1 (a fresh module's), drawn from
``numpy.random.default_rng(seed)``; the same ``seed`` gives the same bytes.
"""

from __future__ import annotations

import collections
import math
from typing import Any

import numpy as np
import onnx  # optional extra `onnx`: this module is imported only by its users
import torch

from coderlm.collect.nets.nb201 import EDGES, NUM_NODES, parse_cell

OPSET = 18  # onnx_export.DEFAULT_OPSET, not imported: that module loads onnxscript (tests check they agree)
IR_VERSION = 10  # what torch's exporter writes for opset 18
IMAGE = 32  # input height and width; NAS-Bench-201's CIFAR size, and the collector's
_FLOAT, _INT64 = onnx.TensorProto.FLOAT, onnx.TensorProto.INT64

Shape = tuple[int, ...]


def _attr(name: str, value: int | float | str | list[int]) -> onnx.AttributeProto:
    return onnx.helper.make_attribute(name, value)


def _conv_attrs(kernel: int, stride: int) -> list[onnx.AttributeProto]:
    pad = kernel // 2
    return [
        _attr("group", 1),
        _attr("pads", [pad] * 4),
        _attr("auto_pad", "NOTSET"),
        _attr("strides", [stride] * 2),
        _attr("dilations", [1, 1]),
        _attr("kernel_shape", [kernel] * 2),
    ]


def _pool_attrs(kernel: int, stride: int, pad: int, count_include_pad: int) -> list[onnx.AttributeProto]:
    return [
        _attr("count_include_pad", count_include_pad),
        _attr("ceil_mode", 0),
        _attr("pads", [pad] * 4),
        _attr("auto_pad", "NOTSET"),
        _attr("strides", [stride] * 2),
        _attr("kernel_shape", [kernel] * 2),
    ]


# Attributes as the exporter writes them, in its order (onnx.printer shows them in stored order).
_ATTRS = {
    ("Conv", 1, 1): _conv_attrs(1, 1),
    ("Conv", 3, 1): _conv_attrs(3, 1),
    ("Conv", 3, 2): _conv_attrs(3, 2),
    "BatchNormalization": [_attr("momentum", 0.9), _attr("epsilon", 1e-5)],
    "cell_pool": _pool_attrs(3, 1, 1, 0),  # AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
    "shortcut_pool": _pool_attrs(2, 2, 0, 1),  # AvgPool2d(2, stride=2)
    "ReduceMean": [_attr("noop_with_empty_axes", 0), _attr("keepdims", 1)],
    "Reshape": [_attr("allowzero", 1)],
    "Gemm": [_attr("beta", 1.0), _attr("transB", 1), _attr("alpha", 1.0), _attr("transA", 0)],
    "Constant": [_attr("value", onnx.TensorProto(data_type=_FLOAT, raw_data=np.float32(0).tobytes()))],
}
_AttrKey = str | tuple[str, int, int]
_ZERO = "val_3"  # the exporter's name for the 0.0 constant (see the module docstring)


def count_convs(cell: str, cells_per_stage: int) -> int:
    """Conv nodes in the network: the stem, 3 per reduction block, one per ``nor_conv`` edge per cell."""
    convs = sum(op.startswith("nor_conv") for op, _ in parse_cell(cell))
    return 1 + 2 * 3 + 3 * cells_per_stage * convs


def _add_value_info(into: Any, name: str, elem_type: int, shape: Shape) -> None:
    """Append ``name: elem_type[shape]`` to a repeated ``ValueInfoProto`` field, as the exporter writes it."""
    value = into.add(name=name, doc_string="")
    tensor = value.type.tensor_type
    tensor.elem_type = elem_type
    tensor.shape.SetInParent()  # a scalar has a shape with no dimensions
    for d in shape:
        tensor.shape.dim.add(dim_value=d)


class _Builder:
    """Writes one network into ``graph``: nodes and value infos as it goes, initializers at the end."""

    def __init__(self, graph: onnx.GraphProto, convs: int) -> None:
        self.graph = graph
        self.params: list[tuple[str, Shape, float, float]] = []  # name, shape, values uniform in [low, high)
        self.buffers: list[tuple[str, Shape, float, float]] = []
        self.values: list[tuple[str, Shape]] = []  # node outputs, in node order
        self.fx = collections.Counter[str]()
        self.next_conv = 14 * convs + 4

    def fx_name(self, base: str, step: int = 1) -> str:
        """torch.fx's name for the next call of ``base``: ``base``, ``base_1``, ... (``step`` values per call)."""
        k = self.fx[base]
        self.fx[base] += step
        return base if k == 0 else f"{base}_{k}"

    def node(self, op: str, inputs: list[str], output: str, name: str, attrs: _AttrKey | None, shape: Shape) -> str:
        node = self.graph.node.add(input=inputs, output=[output], name=name, op_type=op, doc_string="")
        if attrs is not None:
            node.attribute.extend(_ATTRS[attrs])
        self.values.append((output, shape))
        return output

    def simple(self, op: str, fx: str, inputs: list[str], shape: Shape, attrs: str | None = None) -> str:
        out = self.fx_name(fx)
        return self.node(op, inputs, out, f"node_{out}", attrs, shape)

    def uniform(self, name: str, shape: Shape, fan_in: int) -> None:
        """A parameter initialised as torch initialises Conv and Linear: uniform in +-1/sqrt(fan_in)."""
        bound = 1.0 / math.sqrt(fan_in)
        self.params.append((name, shape, -bound, bound))

    def write_initializers(self, constants: list[tuple[str, list[int]]], seed: int) -> None:
        """Parameters, buffers, then the int64 ``constants``; value infos for them, then for the nodes' outputs."""
        tensors = [*self.params, *self.buffers]
        sizes = [math.prod(shape) for _, shape, _, _ in tensors]
        noise = np.random.default_rng(seed).random(sum(sizes), dtype=np.float32)
        offset = 0
        for (name, shape, low, high), size in zip(tensors, sizes, strict=True):
            values = low + (high - low) * noise[offset : offset + size]
            offset += size
            self.graph.initializer.add(
                name=name, dims=shape, data_type=_FLOAT, raw_data=values.tobytes(), doc_string=""
            )
            _add_value_info(self.graph.value_info, name, _FLOAT, shape)
        for name, ints in constants:
            data = np.array(ints, "<i8").tobytes()
            self.graph.initializer.add(name=name, dims=[len(ints)], data_type=_INT64, raw_data=data, doc_string="")
            _add_value_info(self.graph.value_info, name, _INT64, (len(ints),))
        for name, shape in self.values[:-1]:  # the last is the graph output
            _add_value_info(self.graph.value_info, name, _FLOAT, shape)

    # --- layers, as NAS-Bench-201's modules trace

    def conv(self, x: str, shape: Shape, weight: str, c_out: int, kernel: int, stride: int = 1) -> tuple[str, Shape]:
        n, c_in, h, w = shape
        pad = kernel // 2
        out = (n, c_out, (h + 2 * pad - kernel) // stride + 1, (w + 2 * pad - kernel) // stride + 1)
        self.uniform(weight, (c_out, c_in, kernel, kernel), c_in * kernel * kernel)
        name = f"node_Conv_{self.next_conv}"
        self.next_conv += 1
        return self.node("Conv", [x, weight], self.fx_name("conv2d"), name, ("Conv", kernel, stride), out), out

    def batch_norm(self, x: str, shape: Shape, prefix: str) -> str:
        c = shape[1]
        names = [f"{prefix}.{p}" for p in ("weight", "bias", "running_mean", "running_var")]
        self.params += [(names[0], (c,), 1.0, 1.0), (names[1], (c,), 0.0, 0.0)]
        self.buffers += [(names[2], (c,), 0.0, 0.0), (names[3], (c,), 1.0, 1.0)]
        name = f"node_{self.fx_name('_native_batch_norm_legit_no_training')}__0"
        return self.node(
            "BatchNormalization", [x, *names], self.fx_name("getitem", 3), name, "BatchNormalization", shape
        )

    def relu_conv_bn(
        self, x: str, shape: Shape, prefix: str, c_out: int, kernel: int, stride: int = 1
    ) -> tuple[str, Shape]:
        y, out = self.conv(self.simple("Relu", "relu", [x], shape), shape, f"{prefix}.1.weight", c_out, kernel, stride)
        return self.batch_norm(y, out, f"{prefix}.2"), out

    def edge(self, op: str, x: str, shape: Shape, prefix: str) -> str:
        if op == "none":
            return self.simple("Mul", "mul", [x, _ZERO], shape)
        if op == "skip_connect":
            return x
        if op == "avg_pool_3x3":
            return self.simple("AveragePool", "avg_pool2d", [x], shape, "cell_pool")
        return self.relu_conv_bn(x, shape, prefix, shape[1], 3 if op == "nor_conv_3x3" else 1)[0]

    def cell(self, ops: list[str], x: str, shape: Shape, prefix: str) -> str:
        """Node ``j`` sums its edges in ``EDGES`` order, left to right; the cell's output is node 3."""
        edges = list(zip(ops, EDGES, strict=True))
        nodes = [x]
        for j in range(1, NUM_NODES):
            terms = [self.edge(op, nodes[i], shape, f"{prefix}.ops.{i}_{j}") for op, (i, to) in edges if to == j]
            total = terms[0]
            for term in terms[1:]:
                total = self.simple("Add", "add", [total, term], shape)
            nodes.append(total)
        return nodes[-1]

    def reduction(self, x: str, shape: Shape, prefix: str, c_out: int) -> tuple[str, Shape]:
        """``shortcut(x) + conv_b(conv_a(x))``: traced shortcut first, its weight registered last."""
        n, c_in, h, w = shape
        pooled = self.simple("AveragePool", "avg_pool2d", [x], (n, c_in, h // 2, w // 2), "shortcut_pool")
        shortcut, out = self.conv(pooled, (n, c_in, h // 2, w // 2), f"{prefix}.shortcut.1.weight", c_out, 1)
        shortcut_weight = self.params.pop()
        a, a_shape = self.relu_conv_bn(x, shape, f"{prefix}.conv_a", c_out, 3, stride=2)
        b, _ = self.relu_conv_bn(a, a_shape, f"{prefix}.conv_b", c_out, 3)
        self.params.append(shortcut_weight)
        return self.simple("Add", "add", [shortcut, b], out), out


def build_onnx(
    cell: str,
    cells_per_stage: int = 5,
    batch_size: int = 1,
    *,
    num_classes: int = 10,
    stem_channels: int = 16,
    seed: int = 0,
) -> onnx.ModelProto:
    """The ONNX model ``export_onnx(build_network(cell, ...), (batch_size, 3, 32, 32))`` gives, built directly.

    Same arguments as ``build_network`` (``num_classes``, ``stem_channels``, ``cells_per_stage``)
    and the export's batch size; ``seed`` draws the weights (see the module docstring). Raises
    ``ValueError`` for a bad cell string or a size below 1.
    """
    ops = [op for op, _ in parse_cell(cell)]
    sizes = {"cells_per_stage": cells_per_stage, "batch_size": batch_size, "num_classes": num_classes}
    for name, value in [*sizes.items(), ("stem_channels", stem_channels)]:
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    convs = count_convs(cell, cells_per_stage)
    model = onnx.ModelProto(ir_version=IR_VERSION, producer_name="pytorch", producer_version=torch.__version__)
    model.doc_string = ""
    model.opset_import.add(domain="", version=OPSET)
    graph = model.graph
    graph.name = "main_graph"
    graph.doc_string = ""
    b = _Builder(graph, convs)
    if "none" in ops:  # the exporter's 0.0, made for the stem's Conv bias, kept for the Mul nodes
        b.node("Constant", [], _ZERO, "node_Constant_3", "Constant", ())
    c = stem_channels
    shape = (batch_size, 3, IMAGE, IMAGE)
    _add_value_info(graph.input, "x", _FLOAT, shape)
    x, shape = b.conv("x", shape, "stem.0.weight", c, 3)
    x = b.batch_norm(x, shape, "stem.1")
    index = 0
    for stage in range(3):
        if stage > 0:
            x, shape = b.reduction(x, shape, f"cells.{index}", c * 2**stage)
            index += 1
        for _ in range(cells_per_stage):
            x = b.cell(ops, x, shape, f"cells.{index}")
            index += 1
    x = b.simple("Relu", "relu", [b.batch_norm(x, shape, "head.0")], shape)
    n, width = shape[:2]
    axes, flat = f"val_{11 * convs - 1}", f"val_{11 * convs + 3}"
    x = b.simple("ReduceMean", "mean", [x, axes], (n, width, 1, 1), "ReduceMean")
    x = b.simple("Reshape", "view", [x, flat], (n, width), "Reshape")
    b.uniform("classifier.weight", (num_classes, width), width)
    b.uniform("classifier.bias", (num_classes,), width)
    y = b.simple("Gemm", "linear", [x, "classifier.weight", "classifier.bias"], (n, num_classes), "Gemm")
    _add_value_info(graph.output, y, _FLOAT, (n, num_classes))
    b.write_initializers([(axes, [-1, -2]), (flat, [n, width])], seed)
    return model
