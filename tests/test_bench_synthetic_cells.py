"""The synthetic cell costs of bench/synthetic_cells.py: one a sum over operations, one a longest path."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from synthetic_cells import additive, longest_path, longest_path_outlier, synthetic_targets

CELL = "|nor_conv_3x3~0|+|none~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_1x1~1|nor_conv_3x3~2|"


def test_costs_by_hand():
    assert additive(CELL) == pytest.approx(1 + 9 + 0 + 1 + 0.1 + 2 + 9)
    assert longest_path(CELL) == pytest.approx(1 + 9 + 1 + 9)  # 0 -> 1 (conv 3x3) -> 2 (pool) -> 3 (conv 3x3)


def test_where_an_operation_sits_moves_only_the_path():
    moved = "|avg_pool_3x3~0|+|none~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_1x1~1|nor_conv_3x3~2|"
    assert additive(moved) == additive(CELL) and longest_path(moved) == longest_path(CELL)  # the same chain
    off_path = "|nor_conv_3x3~0|+|nor_conv_3x3~0|none~1|+|none~0|none~1|skip_connect~2|"  # 0 -> 2 -> 3
    assert longest_path(off_path) == pytest.approx(1 + 9 + 0.1)  # node 1's conv reaches no output
    assert additive(off_path) == pytest.approx(1 + 9 + 9 + 0.1)


def test_a_cell_whose_output_nothing_reaches():
    cut = "|nor_conv_3x3~0|+|nor_conv_3x3~0|none~1|+|none~0|none~1|none~2|"
    assert longest_path(cut) == 0.5
    assert synthetic_targets([CELL, cut]).shape == (2, 2)
    assert np.all(synthetic_targets([CELL, cut]) > 0)  # positive: spelled in P10
    assert longest_path_outlier(cut) == 10.0
    assert longest_path_outlier(CELL) == pytest.approx(80 + 0.45 * longest_path(CELL))
    outlier = synthetic_targets([CELL, cut], "outlier")
    assert outlier[:, 0].tolist() == synthetic_targets([CELL, cut])[:, 0].tolist()  # additive in both sets
    assert outlier[1, 1] == 10.0


def test_a_malformed_cell_is_refused():
    with pytest.raises(ValueError, match="bad cell string"):
        additive("|conv~0|")
