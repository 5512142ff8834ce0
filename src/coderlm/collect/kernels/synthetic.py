"""A seeded generator of short PyTorch programs, so kernels of every kind and size come without data.

Each program is a random chain of 2-6 operations on one input (or ``chains`` such chains on as many
inputs, each of its own shape: Inductor fuses a chain into one or two kernels, so independent chains
give several kernels for one trace and one compile of the program): pointwise (activations,
arithmetic with constants, clamps), reductions (sum, mean, amax over a dimension, kept and
broadcast back), layer norm, softmax / log-softmax, and a linear layer or a convolution with
an epilogue; shapes are 2-D, 3-D or 4-D with a total of 1e4..4e6 elements (log-uniform);
``float32`` or ``bfloat16``. The result is Python source in KernelBench's convention, so the
same compiler and timer run it.
"""

from __future__ import annotations

import math
import re

import numpy as np

from coderlm.collect.kernels.programs import KernelProgram

POINTWISE = (
    "torch.relu(x)",
    "torch.nn.functional.gelu(x)",
    "torch.sigmoid(x)",
    "torch.tanh(x)",
    "torch.nn.functional.silu(x)",
    "x * {c:.3g} + {d:.3g}",
    "torch.clamp(x, min={lo:.3g}, max={hi:.3g})",
    "torch.exp(-x.abs())",
    "torch.sqrt(x.abs() + 1e-3)",
    "x / (1.0 + x.abs())",
)
REDUCTIONS = ("sum", "mean", "amax")
MAX_MACS = 2e8  # per linear layer or convolution of a multi-chain program: ~50 ms on one core, not seconds
VARIABLE = re.compile(r"\bx\b")  # the variable of a POINTWISE template


def synthetic_program(index: int, seed: int = 0, chains: int = 1) -> KernelProgram:
    """Program ``index`` of the stream seeded by ``seed`` (the same arguments always give the same source),
    with ``chains`` independent inputs, each through its own chain of operations."""
    if chains < 1:
        raise ValueError(f"chains must be >= 1, got {chains}")
    rng = np.random.default_rng([seed, index])
    shapes = [_random_shape(rng)]
    dtype = "bfloat16" if rng.random() < 0.3 else "float32"  # one per program: the model is cast to it
    init: list[str] = []
    body: list[str] = []
    for chain in range(chains):
        if chain:
            shapes.append(_random_shape(rng))
        name, prefix = ("x", "") if chains == 1 else (f"x{chain}", f"{chain}_")
        _chain(rng, shapes[chain], name, prefix, init, body, MAX_MACS if chains > 1 else None)
    program = f"synthetic/{seed}-{index:06d}" + (f"x{chains}" if chains > 1 else "")
    return KernelProgram(program, 0, _source(init, body, shapes), "synthetic", dtype)


def _random_shape(rng: np.random.Generator) -> tuple[int, ...]:
    """A 2-D, 3-D or 4-D shape of 1e4..4e6 elements (log-uniform)."""
    rank = int(rng.choice([2, 3, 4], p=[0.4, 0.3, 0.3]))
    return _shape(rng, rank, math.exp(rng.uniform(math.log(1e4), math.log(4e6))))


def _chain(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    x: str,
    prefix: str,
    init: list[str],
    body: list[str],
    max_macs: float | None,
) -> None:
    """2-6 random operations on the variable ``x`` of ``shape``: lines for ``__init__`` and ``forward``.
    With ``max_macs``, a linear layer's width and a convolution's channels shrink (to no fewer than 4) so
    that it multiplies and adds at most that many times."""
    rank = len(shape)
    for step in range(int(rng.integers(2, 7))):
        kind = rng.choice(["pointwise", "reduction", "norm", "softmax", "linear", "conv"], p=_weights(rank, shape))
        if kind == "pointwise":
            template = POINTWISE[int(rng.integers(len(POINTWISE)))]
            low = float(rng.uniform(-2, 0))
            expression = template.format(c=rng.uniform(0.5, 2), d=rng.uniform(-1, 1), lo=low, hi=low + 2)
            body.append(f"{x} = {VARIABLE.sub(x, expression)}")
        elif kind == "reduction":
            dim = int(rng.integers(1, rank))
            op = REDUCTIONS[int(rng.integers(len(REDUCTIONS)))]
            body.append(f"{x} = {x} - {x}.{op}(dim={dim}, keepdim=True)")
        elif kind == "norm":
            body.append(f"{x} = torch.nn.functional.layer_norm({x}, ({shape[-1]},))")
        elif kind == "softmax":
            function = "softmax" if rng.random() < 0.7 else "log_softmax"
            body.append(f"{x} = torch.{function}({x}, dim={int(rng.integers(1, rank))})")
        elif kind == "linear":
            width = int(2 ** rng.integers(4, 10))
            if max_macs is not None:
                width = _capped(width, math.prod(shape), max_macs)
            init.append(f"self.linear{prefix}{step} = nn.Linear({shape[-1]}, {width})")
            body.append(f"{x} = self.linear{prefix}{step}({x})")
            shape = (*shape[:-1], width)
        else:
            channels, kernel = int(2 ** rng.integers(2, 7)), int(rng.choice([1, 3, 5]))
            if max_macs is not None:
                channels = _capped(channels, math.prod(shape) * kernel**2, max_macs)
            init.append(f"self.conv{prefix}{step} = nn.Conv2d({shape[1]}, {channels}, {kernel}, padding={kernel // 2})")
            body.append(f"{x} = self.conv{prefix}{step}({x})")
            shape = (shape[0], channels, *shape[2:])


def _capped(width: int, macs_per_unit: int, max_macs: float) -> int:
    """``width`` halved until ``width * macs_per_unit <= max_macs``, but not below 4."""
    while width > 4 and width * macs_per_unit > max_macs:
        width //= 2
    return width


def _weights(rank: int, shape: tuple[int, ...]) -> list[float]:
    """Operation kinds: pointwise most often; convolutions only on 4-D inputs of few channels."""
    conv = 0.1 if rank == 4 and shape[1] <= 256 else 0.0
    weights = [0.4, 0.15, 0.1, 0.1, 0.1, conv]
    return [w / sum(weights) for w in weights]


def _shape(rng: np.random.Generator, rank: int, elements: float) -> tuple[int, ...]:
    """A shape of ``rank`` dims holding about ``elements``; each dim >= 2, half of them powers of two."""
    shares = rng.dirichlet(np.full(rank, 2.0))
    dims = [max(2, round(elements**share)) for share in shares]
    if rank == 4:
        dims[1] = min(dims[1], 128)  # channels
    return tuple(2 ** round(math.log2(d)) if rng.random() < 0.5 else d for d in dims)


def _source(init: list[str], body: list[str], shapes: list[tuple[int, ...]]) -> str:
    constructor = "\n".join(f"        {line}" for line in init) or "        pass"
    forward = "\n".join(f"        {line}" for line in body)
    names = ["x"] if len(shapes) == 1 else [f"x{i}" for i in range(len(shapes))]
    inputs = ", ".join(f"torch.randn{shape!r}" for shape in shapes)
    return f"""import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
{constructor}

    def forward(self, {", ".join(names)}):
{forward}
        return {", ".join(names)}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
"""
