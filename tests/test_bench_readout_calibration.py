"""bench/readout_calibration.py's draws: every method scored on the same unseen rows, the mean row per method."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from readout_calibration import METHODS, one_draw, summarize


def test_calibrated_methods_cover_near_the_level_where_the_raw_intervals_do_not():
    rng = np.random.default_rng(0)
    guess = rng.normal(0, 1, size=(600, 1, 3))
    samples = np.exp(guess + 0.02 * rng.normal(size=(600, 16, 3)))  # tight: the samples know no readout error
    truth = np.exp(0.6 * guess[:, 0, 0] + 0.4 * guess[:, 0, 1] + 0.3 * rng.normal(size=600))
    draws = [one_draw(samples, truth, [0, 1, 2], 0.9, seed) for seed in range(6)]
    rows = {r["calibration"]: r for r in summarize("toy", draws, 0.9)}
    assert list(rows) == METHODS and all(r["draws"] == 6 and r["task"] == "toy" for r in rows.values())
    assert rows["raw"]["coverage"] < 0.3 and rows["raw"]["under"] == 1.0
    for method in METHODS[1:]:
        assert 0.75 < rows[method]["coverage"] <= 1.0 and rows[method]["width"] > rows["raw"]["width"]
    assert rows["split (10 more)"]["measured"] == 30 and rows["cross (the 20)"]["measured"] == 20
    assert rows["raw"]["spearman"] == rows["cross (the 20)"]["spearman"] > 0.8  # the same readout, fitted on 20
