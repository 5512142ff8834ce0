"""The programs bench's scores when an RLM learned one target only (bench/programs.py --rlm-objective): the
other target's columns are empty and no figure is made of them."""

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from program_scores import scores

MEASURED = np.array([[1.0, 5.0], [2.0, 4.0], [3.0, 3.0], [4.0, 2.0], [5.0, 1.0], [6.0, 0.5]])
TEST = {"split": "problem", "measured": MEASURED, "tasks": ["go"] * 6, "groups": ["a", "a", "a", "b", "b", "b"]}


def test_both_targets_predicted_score_both():
    row = scores(MEASURED.copy(), "rlm", TEST)
    assert row["go/mem"] == 1.0 and row["go/time"] == 1.0 and row["go/pairs"] == 1.0 and row["go/n_pairs"] == 6


def test_a_target_not_predicted_gets_no_spearman_and_no_pairs():
    runtime_only = MEASURED.copy()
    runtime_only[:, 0] = np.nan
    runtime_only[:, 1] = -runtime_only[:, 1]  # reversed: rho -1
    row = scores(runtime_only, "rlm", TEST)
    assert math.isnan(row["go/mem"]) and math.isnan(row["mean/mem"])
    assert row["go/time"] == -1.0 and row["mean/time"] == -1.0
    assert "go/pairs" not in row and "go/n_pairs" not in row  # memory pairs: not a 0 of comparisons with NaN
