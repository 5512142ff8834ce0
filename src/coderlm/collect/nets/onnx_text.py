"""``onnx.ModelProto`` -> compact, canonical text that never contains weight values.

The grammar, with a real example and token counts, is in docs/onnx_text.md. In short
(``style="compact"``)::

    onnx opset=18 dtype=f32                      # header: opset and the default element type
    input x0 [1,3,32,32]                         # graph inputs, then outputs, with shapes
    output y0 [1,10]
    t0 = Conv[pads=[1,1,1,1]](x0, w0[16,3,3,3])  # [1,16,32,32]
    y0 = Gemm[transB=1](t93, w200[10,64], w201[10])  # [1,10]

- One node per line, ``<outputs> = <Op>[<attributes>](<inputs>)  # <output shapes>``, in a
  depth-first order from the graph outputs that depends on the graph's structure only.
- Canonical names: inputs ``x0..``, outputs ``y0..``, other tensors ``t0..``, weights
  ``w0..`` (shape at first use). Literals (small integer tensors, float scalars) by value.
- Attributes sorted by name, defaults left out; floats as the shortest float32 text.
- A shape missing after ONNX shape inference raises ``ValueError`` naming the tensor
  unless ``allow_missing_shapes`` (then ``?``).

``style="minimal"``: no ``# shape`` when a node's outputs have its first input's type and
shape, and a weight used once is written ``w[16,16,3,3]`` without a number.
``style="onnx"``: ``onnx.printer.to_text`` with initializer values removed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np
import onnx

from coderlm.collect.nets import TEXT_STYLES

MAX_LITERAL = 8  # integer constants with at most this many elements are shown by value
_ALL_ONES = ("strides", "dilations")
_ALL_ZEROS = ("pads",)
_FLOATING = (1, 10, 11, 16)  # TensorProto FLOAT, FLOAT16, DOUBLE, BFLOAT16
_STRING = 8
_CONSTANT_TYPES = {"value_float": np.float32, "value_floats": np.float32, "value_int": np.int64, "value_ints": np.int64}


def is_literal(elem_type: int, dims: tuple[int, ...] | list[int]) -> bool:
    """True for constants shown by value: small integer/bool tensors and floating-point scalars; False for weights."""
    if elem_type in _FLOATING:
        return len(dims) == 0
    return elem_type != _STRING and int(np.prod(dims, dtype=np.int64)) <= MAX_LITERAL


def infer_shapes(model: onnx.ModelProto) -> dict[str, tuple[int, tuple[int | str | None, ...] | None]]:
    """``name -> (elem_type, shape)`` for every tensor, after ONNX shape inference (weights stay out of the copy).

    ``shape`` is None when unknown; a dimension is an int, a symbolic name or None.
    """
    graph = model.graph
    try:
        inferred = onnx.shape_inference.infer_shapes(_without_large_weights(model), strict_mode=False, data_prop=True)
    except onnx.shape_inference.InferenceError as error:
        raise ValueError(f"ONNX shape inference failed for graph {graph.name!r}: {error}") from error
    types: dict[str, tuple[int, tuple[int | str | None, ...] | None]] = {}
    g = inferred.graph
    for init in graph.initializer:
        types[init.name] = (init.data_type, tuple(init.dims))
    for value in [*g.input, *g.value_info, *g.output]:
        if (value.name in types and types[value.name][1] is not None) or not value.type.HasField("tensor_type"):
            continue
        tensor = value.type.tensor_type
        shape = None
        if tensor.HasField("shape"):
            shape = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tensor.shape.dim)
        types[value.name] = (tensor.elem_type, shape)
    return types


def _without_large_weights(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` whose initializers of more than 64 elements are typed graph inputs (no data)."""
    g = model.graph
    slim = onnx.ModelProto(ir_version=model.ir_version, opset_import=model.opset_import, functions=model.functions)
    slim.graph.name = g.name
    slim.graph.node.extend(g.node)
    slim.graph.input.extend(g.input)
    slim.graph.output.extend(g.output)
    slim.graph.value_info.extend(g.value_info)
    listed = {v.name for v in g.input}
    for init in g.initializer:
        if _size(init) <= 64:
            slim.graph.initializer.append(init)
        elif init.name not in listed:
            slim.graph.input.append(onnx.helper.make_tensor_value_info(init.name, init.data_type, list(init.dims)))
    return slim


def _size(tensor: onnx.TensorProto) -> int:
    return int(np.prod(tensor.dims, dtype=np.int64))


def _constant_node_value(node: onnx.NodeProto) -> onnx.TensorProto | None:
    """The tensor a ``Constant`` node produces, or None for other nodes (and sparse constants)."""
    if node.op_type != "Constant" or node.domain not in ("", "ai.onnx") or len(node.attribute) != 1:
        return None
    attr = node.attribute[0]
    if attr.name == "value":
        tensor = onnx.TensorProto()
        tensor.CopyFrom(attr.t)
    elif attr.name in _CONSTANT_TYPES:
        value = onnx.helper.get_attribute_value(attr)
        tensor = onnx.numpy_helper.from_array(np.asarray(value, dtype=_CONSTANT_TYPES[attr.name]))
    else:  # sparse_value
        return None
    tensor.name = node.output[0]
    return tensor


def format_number(value: float | int) -> str:
    """Integers as is; floats as the shortest decimal that reads back to the same float32."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return str(int(value))
    f = np.float32(value)
    if not np.isfinite(f):
        return str(float(f))
    if f == 0 or 1e-4 <= abs(f) < 1e6:
        return np.format_float_positional(f, unique=True, trim="-")
    return np.format_float_scientific(f, unique=True, trim="-")


def _dtype(elem_type: int) -> str:
    name = onnx.helper.tensor_dtype_to_np_dtype(elem_type).name if elem_type else "undefined"
    return {"float32": "f32", "float16": "f16", "float64": "f64", "bfloat16": "bf16"}.get(
        name, name.replace("int", "i").replace("ui", "u")
    )


def _shape(dims: Iterable[int | str | None]) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _attribute(attr: onnx.AttributeProto) -> str:
    value = onnx.helper.get_attribute_value(attr)
    if attr.type == onnx.AttributeProto.TENSOR:
        array = onnx.numpy_helper.to_array(value)
        if is_literal(value.data_type, array.shape):
            return _literal(array, value.data_type)
        return f"{_dtype(value.data_type)}{_shape(array.shape)}"
    if attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
        graphs = value if isinstance(value, list) else [value]
        return "{" + "; ".join(f"graph of {len(g.node)} nodes" for g in graphs) + "}"
    if isinstance(value, bytes):
        return '"' + value.decode("utf-8", "replace") + '"'
    if isinstance(value, list):
        return "[" + ",".join(f'"{v.decode()}"' if isinstance(v, bytes) else format_number(v) for v in value) + "]"
    return format_number(value)


def _is_default(node: onnx.NodeProto, attr: onnx.AttributeProto, opset: int, weight_dims: tuple | None) -> bool:
    value = onnx.helper.get_attribute_value(attr)
    if attr.name == "kernel_shape" and node.op_type in ("Conv", "ConvTranspose") and weight_dims is not None:
        return tuple(value) == tuple(weight_dims[2:])
    if attr.name in _ALL_ONES and isinstance(value, list) and all(v == 1 for v in value):
        return True
    if attr.name in _ALL_ZEROS and isinstance(value, list) and all(v == 0 for v in value):
        return True
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, node.domain)
    except onnx.defs.SchemaError:
        return False
    spec = schema.attributes.get(attr.name)
    if spec is None or not spec.default_value.type:
        return False
    return onnx.helper.get_attribute_value(spec.default_value) == value


def _literal(array: np.ndarray, elem_type: int) -> str:
    values = ",".join(format_number(v) for v in array.reshape(-1).tolist())
    return f"{_dtype(elem_type)}{_shape(array.shape)}{{{values}}}"


def _canonical_order(graph: onnx.GraphProto) -> list[int]:
    """Node indices in depth-first post-order from the graph outputs (inputs in position order), then the rest."""
    producer = {out: i for i, node in enumerate(graph.node) for out in node.output if out}
    order: list[int] = []
    seen: set[int] = set()

    def visit(root: int) -> None:
        stack = [(root, 0)]
        while stack:
            index, position = stack.pop()
            if position == 0 and index in seen:
                continue
            seen.add(index)
            inputs = graph.node[index].input
            while position < len(inputs) and (inputs[position] not in producer or producer[inputs[position]] in seen):
                position += 1
            if position < len(inputs):
                stack.extend([(index, position + 1), (producer[inputs[position]], 0)])
            else:
                order.append(index)

    for out in graph.output:
        if out.name in producer:
            visit(producer[out.name])
    for index in range(len(graph.node)):
        if index not in seen:
            visit(index)
    return order


STYLES = TEXT_STYLES


def onnx_to_text(model: onnx.ModelProto, style: str = "compact", allow_missing_shapes: bool = False) -> str:
    """The canonical text of ``model`` in ``style`` (see the module docstring); never contains weight values."""
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}; expected one of {STYLES}")
    if style == "onnx":
        return _onnx_printer_text(model)
    return _Writer(model, minimal=style == "minimal", allow_missing_shapes=allow_missing_shapes).text()


class _Writer:
    """Canonical names and line formatting for one graph."""

    def __init__(self, model: onnx.ModelProto, minimal: bool, allow_missing_shapes: bool) -> None:
        self.graph, self.minimal, self.allow_missing = model.graph, minimal, allow_missing_shapes
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
        self.types = infer_shapes(model)
        self.outputs = [v.name for v in self.graph.output]
        self.constants = {init.name: init for init in self.graph.initializer}
        for node in self.graph.node:
            tensor = _constant_node_value(node)
            if tensor is not None and tensor.name not in self.outputs:
                self.constants[tensor.name] = tensor
        self.nodes = [self.graph.node[i] for i in _canonical_order(self.graph)]
        self.nodes = [n for n in self.nodes if not (n.output and n.output[0] in self.constants)]
        self.uses = Counter(name for node in self.nodes for name in node.input)
        counts = Counter(self.types[o][0] for n in self.nodes for o in n.output if o in self.types)
        self.default_type = counts.most_common(1)[0][0] if counts else onnx.TensorProto.FLOAT
        self.inputs = [v.name for v in self.graph.input if v.name not in self.constants]
        self.names = {name: f"x{k}" for k, name in enumerate(self.inputs)}
        for k, name in enumerate(self.outputs):
            if name not in self.constants:
                self.names.setdefault(name, f"y{k}")
        self.counters = Counter[str]()

    def type_text(self, name: str) -> str:
        elem, dims = self.types.get(name, (0, None))
        if dims is None:
            if not self.allow_missing:
                raise ValueError(f"no shape for tensor {self.names.get(name, '?')} ({name!r}) after shape inference")
            return "?"
        return ("" if elem == self.default_type else _dtype(elem)) + _shape(dims)

    def fresh(self, prefix: str) -> str:
        self.counters[prefix] += 1
        return f"{prefix}{self.counters[prefix] - 1}"

    def use(self, name: str) -> str:
        """An input reference: a name, a literal, or a weight's first use with its shape."""
        if not name:
            return "_"
        if name in self.names:
            return self.names[name]
        if name not in self.constants:
            raise ValueError(f"tensor {name!r} is used before it is defined (graph {self.graph.name!r} is not a DAG)")
        tensor = self.constants[name]
        if is_literal(tensor.data_type, tensor.dims):
            return _literal(onnx.numpy_helper.to_array(tensor), tensor.data_type)
        label = "w" if self.minimal and self.uses[name] == 1 else self.fresh("w")
        self.names[name] = label
        return label + ("" if tensor.data_type == self.default_type else _dtype(tensor.data_type)) + _shape(tensor.dims)

    def line(self, node: onnx.NodeProto) -> str:
        for out in node.output:
            if out and out not in self.names:
                self.names[out] = self.fresh("t")
        op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"
        weight = self.types.get(node.input[1], (0, None))[1] if len(node.input) > 1 else None
        attrs = sorted(
            (a for a in node.attribute if not _is_default(node, a, self.opset, weight)), key=lambda a: a.name
        )
        attr_text = "[" + ", ".join(f"{a.name}={_attribute(a)}" for a in attrs) + "]" if attrs else ""
        args = list(node.input)
        while args and not args[-1]:
            args.pop()
        first_type = self.type_text(args[0]) if args and args[0] not in self.constants else None
        out_types = [self.type_text(o) for o in node.output if o]
        inputs = ", ".join(self.use(a) for a in args)
        text = f"{', '.join(self.names[o] if o else '_' for o in node.output)} = {op}{attr_text}({inputs})"
        if self.minimal and all(t == first_type for t in out_types):
            return text
        return f"{text}  # {', '.join(out_types)}"

    def text(self) -> str:
        body = [self.line(node) for node in self.nodes]  # first, so a missing shape is reported where it starts
        lines = [f"onnx opset={self.opset} dtype={_dtype(self.default_type)}"]
        lines += [f"input {self.names[name]} {self.type_text(name)}" for name in self.inputs]
        lines += [f"output {self.use(name)} {self.type_text(name)}" for name in self.outputs]
        lines += body
        unused = [
            i.name for i in self.graph.initializer if i.name not in self.names and not is_literal(i.data_type, i.dims)
        ]
        lines += [f"unused {self.use(name)}" for name in unused]
        return "\n".join(lines) + "\n"


_DATA_FIELDS = ("raw_data", "float_data", "int32_data", "int64_data", "double_data", "uint64_data", "string_data")


def _onnx_printer_text(model: onnx.ModelProto) -> str:
    """``onnx.printer.to_text`` of a copy of ``model`` whose initializers keep name, type and shape only."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for init in copy.graph.initializer:
        for field in _DATA_FIELDS:
            init.ClearField(field)
    return onnx.printer.to_text(copy)
