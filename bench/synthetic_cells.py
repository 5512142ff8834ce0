"""Two synthetic costs of a NAS-Bench-201 cell, one additive over its operations and one not.

``bench/rlm_vs_head.py --synthetic`` trains on these instead of NAS-Bench-201's measured objectives, to
test the reading that the regression head's lead on latency comes from latency being close to a sum over
operations (docs/results.md "What the head's lead is made of"): the same cells, the same split, two exact
targets whose structure is known.

- ``additive``: 1 + the sum of a fixed cost per operation over the six edges (``COST``; where an edge
  sits does not matter), as FLOPs and, roughly, latency are.
- ``longest_path``: 1 + the costliest path from the cell's input (node 0) to its output (node 3) through
  edges that are not ``none`` (a maximum over paths: which edge holds which operation matters, and most
  operations off that path count for nothing); 0.5 when no path reaches the output. A depth-like quantity,
  as accuracy is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from coderlm.collect.nets.nb201 import EDGES, NUM_NODES, parse_cell

COST = {"none": 0.0, "skip_connect": 0.1, "avg_pool_3x3": 1.0, "nor_conv_1x1": 2.0, "nor_conv_3x3": 9.0}
TARGETS = ("additive", "longest_path")


def additive(cell: str) -> float:
    return 1.0 + sum(COST[op] for op, _ in parse_cell(cell))


def longest_path(cell: str) -> float:
    depth = [0.0] + [-np.inf] * (NUM_NODES - 1)
    for (op, _), (source, node) in zip(parse_cell(cell), EDGES, strict=True):  # EDGES: sources before targets
        if op != "none":
            depth[node] = max(depth[node], depth[source] + COST[op])
    return 1.0 + depth[-1] if np.isfinite(depth[-1]) else 0.5


def synthetic_targets(cells: Sequence[str]) -> np.ndarray:
    """One row per cell: ``additive``, ``longest_path``."""
    return np.array([[additive(cell), longest_path(cell)] for cell in cells])
