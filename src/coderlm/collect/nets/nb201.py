"""NAS-Bench-201: cell strings and the network they stand for.

A cell is a DAG of 4 nodes; node 0 is the cell input and node ``j`` (1..3) sums
``op_ij(node i)`` over ``i < j``. The 6 edges are written in the official syntax::

    |op~0|+|op~0|op~1|+|op~0|op~1|op~2|

one ``|``-delimited group per node 1, 2, 3, where ``op~i`` is the operation on the
edge from node ``i``. The network (``build_network``) is the NAS-Bench-201 macro
skeleton: a 3x3 conv stem + BN, three stages of ``cells_per_stage`` cells with C, 2C
and 4C channels separated by residual reduction blocks, then BN-ReLU, global average
pooling and a linear classifier. The cell output is node 3.

Sizes (C=16, 5 cells per stage, 10 classes, input 1x3x32x32), as hand counts that the
tests check (parameters: tests/collect/nets/test_nb201.py; MACs: test_onnx_cost.py): every edge
``nor_conv_3x3`` -> 1,531,546 parameters and 220,119,680 MACs; every edge ``none``,
``skip_connect`` or ``avg_pool_3x3`` -> 73,306 parameters (``skip_connect``: 7,783,040
MACs, measured with ``coderlm.collect.nets.onnx_cost``). These are the published NAS-Bench-201
extremes: ~1.53 M and ~0.07 M parameters, ~220 M and 7.78 M "FLOPs" (NAS-Bench-201's
FLOPs are multiply-accumulates).

The cell is the one NAS-Bench-201 trained and HW-NAS-Bench timed (``InferCell``): every edge
is a module in the node's sum, ``none`` included, as ``x * 0``. So a branch whose every way
to the output is ``none`` (e.g. node 1 when edges 1->2 and 1->3 are ``none``) still runs,
stays in the exported graph as ``Mul(..., 0)``, and counts in FLOPs and parameters. Those
branches cost time on the measured devices; a graph without them would hide it (cells with
different latencies would get the same text).

``coderlm.collect.nets.nb201_onnx.build_onnx`` writes the exported ONNX graph of this network
directly, without torch's exporter (milliseconds instead of seconds); the collector uses it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import torch
from torch import nn

BUILDER = 2  # revision of the graph, recorded in collected rows: 2 computes `none` edges as x * 0
# (1 left them out, and the exporter dropped the branches behind them). build_network exported and
# nb201_onnx.build_onnx give the same graph; a change to either that changes the text bumps this.
OPS = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")
NUM_NODES = 4
EDGES = tuple((i, j) for j in range(1, NUM_NODES) for i in range(j))  # (from, to): (0,1) (0,2) (1,2) (0,3) (1,3) (2,3)

Cell = tuple[tuple[str, int], ...]


def parse_cell(s: str) -> Cell:
    """Parse ``|op~0|+|op~0|op~1|+|op~0|op~1|op~2|`` into 6 ``(op, input_node)`` pairs in ``EDGES`` order.

    Raises ``ValueError`` naming the string and what is wrong with it.
    """
    if not isinstance(s, str):
        raise ValueError(f"cell string must be a str, got {type(s).__name__}: {s!r}")
    groups = s.split("+")
    if len(groups) != NUM_NODES - 1:
        raise ValueError(f"bad cell string {s!r}: {len(groups)} nodes separated by '+', expected {NUM_NODES - 1}")
    edges: list[tuple[str, int]] = []
    for node, group in enumerate(groups, start=1):
        if len(group) < 2 or not group.startswith("|") or not group.endswith("|"):
            raise ValueError(f"bad cell string {s!r}: node {node} group {group!r} must start and end with '|'")
        items = group[1:-1].split("|")
        if len(items) != node:
            raise ValueError(f"bad cell string {s!r}: node {node} has {len(items)} edges {items}, expected {node}")
        for expected_input, item in enumerate(items):
            op, sep, index = item.partition("~")
            if not sep:
                raise ValueError(f"bad cell string {s!r}: edge {item!r} of node {node} is not 'op~input'")
            if op not in OPS:
                raise ValueError(f"bad cell string {s!r}: unknown op {op!r} on node {node}; expected one of {OPS}")
            if index != str(expected_input):
                raise ValueError(
                    f"bad cell string {s!r}: edge {item!r} of node {node} has input index {index!r}, "
                    f"expected {expected_input}"
                )
            edges.append((op, expected_input))
    return tuple(edges)


def format_cell(edges: Sequence[tuple[str, int]] | Sequence[str]) -> str:
    """Inverse of ``parse_cell``: 6 ``(op, input_node)`` pairs (or just 6 op names) in ``EDGES`` order."""
    ops = [e if isinstance(e, str) else e[0] for e in edges]
    if len(ops) != len(EDGES):
        raise ValueError(f"a cell has {len(EDGES)} edges, got {len(ops)}: {list(edges)!r}")
    for edge, (i, _) in zip(edges, EDGES, strict=True):
        if not isinstance(edge, str) and edge[1] != i:
            raise ValueError(f"edge {edge!r} has input node {edge[1]}, expected {i} (edges in order {EDGES})")
    bad = [op for op in ops if op not in OPS]
    if bad:
        raise ValueError(f"unknown ops {bad} in {list(edges)!r}; expected ops from {OPS}")
    return "+".join(
        "|" + "|".join(f"{ops[k]}~{i}" for k, (i, j) in enumerate(EDGES) if j == node) + "|"
        for node in range(1, NUM_NODES)
    )


def all_cells() -> list[str]:
    """All 5**6 = 15,625 cell strings, in ``itertools.product(OPS, repeat=6)`` order over ``EDGES``.

    The first edge (0->1) varies slowest, the last (2->3) fastest, each in ``OPS`` order.
    This is NOT the official NAS-Bench-201 index order (see the data set's ``index`` column).
    """
    return [format_cell(ops) for ops in itertools.product(OPS, repeat=len(EDGES))]


class ReLUConvBN(nn.Sequential):
    """ReLU, Conv2d (no bias), BatchNorm2d: NAS-Bench-201's ``nor_conv_kxk`` and the reduction block's halves."""

    def __init__(self, c_in: int, c_out: int, kernel: int, stride: int = 1) -> None:
        super().__init__(
            nn.ReLU(),
            nn.Conv2d(c_in, c_out, kernel, stride=stride, padding=kernel // 2, bias=False),
            nn.BatchNorm2d(c_out),
        )


class Zero(nn.Module):
    """NAS-Bench-201's ``none`` edge at stride 1: ``x * 0``, computed, not skipped."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mul(0.0)


def make_op(op: str, channels: int) -> nn.Module:
    """The module on one edge."""
    if op == "none":
        return Zero()
    if op == "skip_connect":
        return nn.Identity()
    if op == "nor_conv_1x1":
        return ReLUConvBN(channels, channels, 1)
    if op == "nor_conv_3x3":
        return ReLUConvBN(channels, channels, 3)
    if op == "avg_pool_3x3":
        return nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
    raise ValueError(f"no module for op {op!r}; expected one of {OPS}")


class Cell201(nn.Module):
    """One NAS-Bench-201 cell: node ``j`` is the sum of its 3 edge modules, ``none`` ones included."""

    def __init__(self, cell: str, channels: int) -> None:
        super().__init__()
        self.cell = cell
        self.ops = nn.ModuleDict(
            {f"{i}_{j}": make_op(op, channels) for (op, i), (_, j) in zip(parse_cell(cell), EDGES, strict=True)}
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        nodes = [x]
        for j in range(1, NUM_NODES):
            terms = [self.ops[f"{i}_{j}"](nodes[i]) for i, jj in EDGES if jj == j]
            total = terms[0]
            for term in terms[1:]:
                total = total + term
            nodes.append(total)
        return nodes[-1]

    def extra_repr(self) -> str:
        return self.cell


class ResNetReduction(nn.Module):
    """NAS-Bench-201's reduction block: ResNet basic block with stride 2 and an AvgPool+Conv1x1 shortcut."""

    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.conv_a = ReLUConvBN(c_in, c_out, 3, stride=2)
        self.conv_b = ReLUConvBN(c_out, c_out, 3)
        self.shortcut = nn.Sequential(nn.AvgPool2d(2, stride=2), nn.Conv2d(c_in, c_out, 1, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shortcut(x) + self.conv_b(self.conv_a(x))


class Network201(nn.Module):
    """The NAS-Bench-201 macro skeleton around one cell."""

    def __init__(self, cell: str, num_classes: int = 10, stem_channels: int = 16, cells_per_stage: int = 5) -> None:
        super().__init__()
        parse_cell(cell)
        if num_classes < 1 or stem_channels < 1 or cells_per_stage < 1:
            raise ValueError(
                f"num_classes, stem_channels and cells_per_stage must be >= 1, got "
                f"{num_classes}, {stem_channels}, {cells_per_stage}"
            )
        c = stem_channels
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, padding=1, bias=False), nn.BatchNorm2d(c))
        layers: list[nn.Module] = []
        for stage in range(3):
            width = c * 2**stage
            if stage > 0:
                layers.append(ResNetReduction(width // 2, width))
            layers.extend(Cell201(cell, width) for _ in range(cells_per_stage))
        self.cells = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.BatchNorm2d(4 * c), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(4 * c, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.head(self.cells(self.stem(x))))
        return self.classifier(torch.flatten(x, 1))


def build_network(cell: str, num_classes: int = 10, stem_channels: int = 16, cells_per_stage: int = 5) -> nn.Module:
    """The NAS-Bench-201 network for ``cell`` (input ``N x 3 x H x W``, e.g. 1x3x32x32), in eval mode."""
    return Network201(cell, num_classes, stem_channels, cells_per_stage).eval()
