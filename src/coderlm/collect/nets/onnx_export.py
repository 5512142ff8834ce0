"""PyTorch module -> ``onnx.ModelProto``, and reading ``.onnx`` files.

Exporter choice: ``torch.onnx.export(..., dynamo=True)`` (the ``torch.export``-based
exporter, built on ``onnxscript``), with torch's own graph optimization turned off and
a small, fixed clean-up of ours instead. Why:

- It is the default and the maintained path in torch >= 2.9; the TorchScript exporter
  (``dynamo=False``) still runs in torch 2.13 but warns that it will be removed.
- The TorchScript exporter deduplicates initializers *by value*, so the graph (extra
  ``Identity`` nodes) depends on the weights, e.g. freshly initialised BatchNorm
  tensors that happen to be equal; the dynamo exporter keeps one initializer per tensor.
- Both exporters fold eval-mode BatchNorm into the preceding Conv when left to
  optimize. We keep BatchNorm as its own node so the graph reads like the architecture
  (ReLU-Conv-BN) and its parameters add up to ``sum(p.numel() for p in module.parameters())``.
  Pass ``fold_batchnorm=True`` for torch's fully optimized inference graph instead (it
  also folds constant subgraphs, e.g. an all-``none`` NAS-Bench-201 node, into weights).

Our clean-up (``_clean``): fold only shape arithmetic (``Shape``, ``Cast``, ``Concat``,
``Expand`` or ``Reshape`` to at most 1-D, ...), never activations, so a zero tensor stays one ``Expand``
node instead of becoming a large constant; drop all-zero Conv/Gemm biases the exporter
inserts; remove dead nodes; clear doc strings and per-node metadata. The result is
deterministic: exporting the same module twice gives byte-identical serialized protos.

Everything here is static-shape: the batch size is ``input_shape[0]``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import onnx
import onnxscript.optimizer
import onnxscript.rewriter
import torch
from google.protobuf.message import DecodeError
from onnxscript import ir
from onnxscript.rewriter.rules import common as rules
from torch import nn

DEFAULT_OPSET = 18  # torchlib (onnxscript) emits opset 18; lower versions need a lossy conversion

# Ops that compute shapes or small constants: folded when their inputs are constant.
_FOLDABLE = frozenset(
    {"Constant", "Shape", "Size", "Cast", "CastLike", "Concat", "Gather", "Unsqueeze", "Squeeze", "Slice", "Range"}
)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence the exporter's warnings and log lines (e.g. 'torchvision is not installed')."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


def _should_fold(node: Any) -> bool:
    if node.op_type in ("Expand", "Reshape"):  # bias and shape vectors, never activation-sized tensors
        shape = node.outputs[0].shape
        return shape is not None and len(shape) <= 1
    return node.domain in ("", "ai.onnx") and node.op_type in _FOLDABLE


def _clean(model: Any) -> onnx.ModelProto:
    """Fold shape arithmetic, drop zero biases and dead nodes, strip doc strings: ir.Model -> ModelProto."""
    onnxscript.optimizer.fold_constants(model, onnx_shape_inference=True, should_fold=_should_fold)
    model = onnxscript.rewriter.rewrite(
        model,
        [
            rules.remove_optional_bias_from_conv_rule,
            rules.remove_optional_bias_from_gemm_rule,
            rules.no_op_cast_rule,
            rules.no_op_expand_rule,
        ],
    )
    onnxscript.optimizer.remove_unused_nodes(model)
    proto = ir.serde.serialize_model(model)
    return _strip_metadata(proto)


def _strip_metadata(proto: onnx.ModelProto) -> onnx.ModelProto:
    """Clear doc strings and metadata (stack traces, source names) that vary with the code, not the graph."""
    proto.doc_string = ""
    del proto.metadata_props[:]
    proto.graph.doc_string = ""
    del proto.graph.metadata_props[:]
    for node in proto.graph.node:
        node.doc_string = ""
        del node.metadata_props[:]
    for value in [*proto.graph.value_info, *proto.graph.input, *proto.graph.output, *proto.graph.initializer]:
        value.doc_string = ""
        del value.metadata_props[:]
    return proto


def export_onnx(
    module: nn.Module,
    input_shape: Sequence[int] = (1, 3, 32, 32),
    opset: int = DEFAULT_OPSET,
    fold_batchnorm: bool = False,
) -> onnx.ModelProto:
    """Export ``module`` in eval mode for one float32 input of ``input_shape``; weights are initializers.

    The module's training flag is restored afterwards. Raises ``ValueError`` for a bad
    shape and ``RuntimeError`` (naming the module class) when torch cannot export it.
    """
    shape = tuple(int(d) for d in input_shape)
    if not shape or any(d < 1 for d in shape):
        raise ValueError(f"input_shape must be positive dimensions, got {tuple(input_shape)!r}")
    example = torch.zeros(shape, dtype=torch.float32)
    was_training = module.training
    module.eval()
    try:
        with _quiet(), torch.no_grad():
            program = torch.onnx.export(
                module,
                (example,),
                dynamo=True,
                opset_version=opset,
                optimize=fold_batchnorm,
                external_data=False,
                verbose=False,
            )
    except Exception as error:
        raise RuntimeError(f"torch.onnx.export failed for {type(module).__name__}: {error}") from error
    finally:
        module.train(was_training)
    if program is None:
        raise RuntimeError(f"torch.onnx.export returned no program for {type(module).__name__}")
    proto = _strip_metadata(program.model_proto) if fold_batchnorm else _clean(program.model)
    onnx.checker.check_model(proto)
    return proto


def save_onnx(model: onnx.ModelProto, path: str | Path) -> Path:
    """Write ``model`` (weights inside, deterministic serialization) to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(model.SerializeToString(deterministic=True))
    return path


def load_onnx(path: str | Path) -> onnx.ModelProto:
    """Read an ``.onnx`` file; ``ValueError`` naming the file when it is missing, corrupt or not ONNX."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such ONNX file")
    data = path.read_bytes()
    try:
        model = onnx.ModelProto.FromString(data)
    except (DecodeError, RuntimeError, ValueError) as error:
        raise ValueError(f"{path}: not a valid ONNX model (protobuf decode failed: {error})") from error
    if not model.HasField("graph") or not model.opset_import or not model.ir_version:
        raise ValueError(f"{path}: not a valid ONNX model (no graph, opset or IR version in {len(data)} bytes)")
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as error:
        raise ValueError(f"{path}: invalid ONNX model: {str(error).splitlines()[0]}") from error
    return model
