"""Split-conformal intervals cover what they promise, and say when they cannot."""

import numpy as np
import pytest

from coderlm.decoding.calibration import Calibration, CoverageError, calibrate, smallest_set
from coderlm.decoding.estimates import central_interval


def overconfident(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Samples (n, 64, 2) far too narrow around the truth: raw 90% intervals cover little."""
    rng = np.random.default_rng(seed)
    truth = np.exp(rng.normal(3.0, 1.0, size=(n, 2)))
    centre = truth * np.exp(rng.normal(0.0, 0.3, size=(n, 2)))  # the model is off by ~30%
    samples = centre[:, None, :] * np.exp(rng.normal(0.0, 0.02, size=(n, 64, 2)))  # but says 2%
    return samples, truth


def coverage(intervals: np.ndarray, truth: np.ndarray) -> float:
    return float(((intervals[..., 0] <= truth) & (truth <= intervals[..., 1])).mean())


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9])
def test_calibrated_intervals_cover_the_level_on_new_rows(level):
    samples, truth = overconfident(400, seed=0)
    calibration = calibrate(samples, truth)
    test_samples, test_truth = overconfident(4000, seed=1)
    assert coverage(central_interval(test_samples, level), test_truth) < 0.2
    assert level - 0.03 <= coverage(calibration.interval(test_samples, level), test_truth) <= level + 0.05
    assert calibration.log == [True, True]  # positive values: relative errors


def test_too_small_a_set_says_which_levels_it_cannot_promise():
    samples, truth = overconfident(5, seed=2)
    calibration = calibrate(samples, truth)
    assert smallest_set(0.9) == 9 and smallest_set(0.8) == 4 and calibration.promised() == [0.5, 0.8]
    with pytest.raises(CoverageError, match=r"5 calibration rows cannot promise 90% coverage \(at least 9 needed\)"):
        calibration.interval(samples, 0.9)


def test_round_trip_and_missing_values():
    samples, truth = overconfident(30, seed=3)
    truth[0, 1] = np.nan  # a missing objective value: that row leaves that objective's scores only
    calibration = calibrate(samples, truth)
    assert [len(s) for s in calibration.scores[0.9]] == [30, 29]
    again = Calibration.from_dict(calibration.to_dict())
    np.testing.assert_allclose(again.interval(samples, 0.8), calibration.interval(samples, 0.8))


def test_a_few_nan_samples_leave_the_row_in_and_mostly_nan_leaves_it_out():
    """A model that learned <NaN> (missing="auto") writes it now and then for a measured objective: the row's
    interval is its numbers'; a row whose samples are mostly <NaN> has no interval and no score."""
    samples, truth = overconfident(30, seed=6)
    samples[:, :3, 0] = np.nan  # 3 of 64 samples of every row
    samples[0, :40, 1] = np.nan  # most of row 0's second objective
    calibration = calibrate(samples, truth)
    assert [len(s) for s in calibration.scores[0.9]] == [30, 29] and calibration.log == [True, True]
    widened = calibration.interval(samples, 0.9)
    assert np.isfinite(widened[:, 0]).all() and np.isnan(widened[0, 1]).all()


def test_values_that_can_be_negative_are_calibrated_in_their_units():
    rng = np.random.default_rng(4)
    truth = rng.normal(0.0, 1.0, size=(200, 1))
    samples = truth[:, None, :] + 0.5 + rng.normal(0.0, 0.01, size=(200, 32, 1))  # biased by +0.5
    calibration = calibrate(samples, truth)
    assert calibration.log == [False]
    assert coverage(calibration.interval(samples, 0.9), truth) >= 0.9


def test_an_objective_without_any_value_keeps_raw_intervals():
    samples, truth = overconfident(30, seed=5)
    truth[:, 0] = np.nan  # e.g. an objective a fine-tuned model writes only as context
    calibration = calibrate(samples, truth)
    assert [len(s) for s in calibration.scores[0.9]] == [0, 30] and calibration.size == 30
    widened = calibration.interval(samples, 0.9)
    np.testing.assert_array_equal(widened[:, 0], central_interval(samples, 0.9)[:, 0])
    assert coverage(widened[:, 1:], truth[:, 1:]) >= 0.9
    with pytest.raises(CoverageError, match="no calibration row has a value for any objective"):
        calibrate(samples, np.full_like(truth, np.nan))
