"""CPU inference latency of an ONNX model with onnxruntime.

One ``InferenceSession`` on ``CPUExecutionProvider`` with ``intra_op_num_threads=threads``,
``inter_op_num_threads=1``, sequential execution and onnxruntime's default (full) graph
optimizations (so eval-mode BatchNorm is fused into Conv at load time, as in deployment).
Each of the ``warmup`` runs is discarded; each of the ``repeats`` runs is timed alone
with ``time.perf_counter`` around ``session.run``; the result is their median and
10th/90th percentiles in milliseconds.

Inputs are random (standard normal for floating types, zeros for integer and bool types,
fixed ``seed``). The batch size is the first dimension of every graph input: a symbolic
first dimension is set to ``batch_size``; a static one must already equal it, since
``coderlm.collect.nets.onnx_export`` exports static shapes. To time batch 32, export with
``input_shape=(32, 3, 32, 32)``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

from coderlm.collect.nets.onnx_export import load_onnx


def _feeds(model: onnx.ModelProto, batch_size: int, seed: int, where: str) -> dict[str, np.ndarray]:
    """Random arrays for the graph inputs that are not initializers."""
    rng = np.random.default_rng(seed)
    initializers = {i.name for i in model.graph.initializer}
    feeds: dict[str, np.ndarray] = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
        if dims and dims[0] is None:
            dims[0] = batch_size
        elif dims and dims[0] != batch_size:
            raise ValueError(
                f"{where}: input {value.name!r} has static batch size {dims[0]}, not {batch_size}; "
                f"re-export with input_shape=({batch_size}, ...) to time batch {batch_size}"
            )
        if any(d is None for d in dims[1:]):
            raise ValueError(f"{where}: input {value.name!r} has an unknown non-batch dimension: {dims}")
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if np.issubdtype(dtype, np.floating):
            feeds[value.name] = rng.standard_normal(dims).astype(dtype)
        else:
            feeds[value.name] = np.zeros(dims, dtype=dtype)
    return feeds


def measure_latency(
    model: onnx.ModelProto | str | Path,
    batch_size: int = 1,
    warmup: int = 10,
    repeats: int = 50,
    threads: int = 1,
    seed: int = 0,
) -> dict[str, Any]:
    """Median, p10 and p90 wall-clock milliseconds of ``repeats`` runs on CPU (see the module docstring)."""
    if batch_size < 1 or warmup < 0 or repeats < 1 or threads < 1:
        raise ValueError(
            f"need batch_size >= 1, warmup >= 0, repeats >= 1, threads >= 1; "
            f"got {batch_size}, {warmup}, {repeats}, {threads}"
        )
    where = str(model) if isinstance(model, (str, Path)) else f"model graph {model.graph.name!r}"
    proto = load_onnx(model) if isinstance(model, (str, Path)) else model
    feeds = _feeds(proto, batch_size, seed, where)

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(
            proto.SerializeToString(), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as error:
        raise ValueError(f"{where}: onnxruntime cannot load it: {error}") from error
    for _ in range(warmup):
        session.run(None, feeds)
    times = np.empty(repeats)
    for k in range(repeats):
        start = time.perf_counter()
        session.run(None, feeds)
        times[k] = time.perf_counter() - start
    p10, median, p90 = np.percentile(times * 1e3, [10, 50, 90])
    return {
        "median_ms": float(median),
        "p10_ms": float(p10),
        "p90_ms": float(p90),
        "repeats": repeats,
        "warmup": warmup,
        "threads": threads,
        "batch_size": batch_size,
    }
