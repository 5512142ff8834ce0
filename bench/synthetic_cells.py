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
- ``longest_path_outlier``: the same ranking as ``longest_path`` in values shaped like NAS-Bench-201's
  accuracy: 80 + 0.45 x the costliest path (80.5-89.5), and 10 where no path reaches the output (exactly
  NAS-Bench-201's 2.2 % of cells at 10 % accuracy): a long low tail, and most values sharing their decade
  and first digit, so that ``target_scale="auto"`` spells it by rank as it does the accuracy.

``SETS`` names the pairs a run trains on: ``raw`` (``additive``, ``longest_path``) and ``outlier``
(``additive``, ``longest_path_outlier``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from coderlm.collect.nets.nb201 import EDGES, NUM_NODES, parse_cell

COST = {"none": 0.0, "skip_connect": 0.1, "avg_pool_3x3": 1.0, "nor_conv_1x1": 2.0, "nor_conv_3x3": 9.0}
SETS = {"raw": ("additive", "longest_path"), "outlier": ("additive", "longest_path_outlier")}


def additive(cell: str) -> float:
    return 1.0 + sum(COST[op] for op, _ in parse_cell(cell))


def longest_path(cell: str) -> float:
    depth = [0.0] + [-np.inf] * (NUM_NODES - 1)
    for (op, _), (source, node) in zip(parse_cell(cell), EDGES, strict=True):  # EDGES: sources before targets
        if op != "none":
            depth[node] = max(depth[node], depth[source] + COST[op])
    return 1.0 + depth[-1] if np.isfinite(depth[-1]) else 0.5


def longest_path_outlier(cell: str) -> float:
    path = longest_path(cell)
    return 10.0 if path == 0.5 else 80.0 + 0.45 * path  # 80.5-89.5: one decade and first digit, as the accuracy


def synthetic_targets(cells: Sequence[str], name: str = "raw") -> np.ndarray:
    """One row per cell, one column per target of the set ``name`` (``SETS``)."""
    costs = {"additive": additive, "longest_path": longest_path, "longest_path_outlier": longest_path_outlier}
    return np.array([[costs[target](cell) for target in SETS[name]] for cell in cells])
