"""Targets as training tensors: spelling, missing values, and the per-token loss weights."""

from __future__ import annotations

import numpy as np

from coderlm.numbers import P10, NumberCodec
from coderlm.training.examples import encode_targets, regression_targets


def test_digit_decay_weighs_each_objectives_digits_and_keeps_missing_at_zero():
    codec = NumberCodec(P10(digits=3), 2)
    values = np.array([[1.5, 20.0], [np.nan, 3.0]])
    targets = encode_targets(codec, values, "mask", digit_decay=0.5)
    one = [1, 1, 1, 0.5, 0.25]  # sign, exponent, d1, d2, d3
    np.testing.assert_allclose(targets.weights[0], one + one)
    np.testing.assert_allclose(targets.weights[1], [0] * 5 + one)  # the missing target is not learned
    plain = encode_targets(codec, values, "mask")
    np.testing.assert_array_equal(plain.ids, targets.ids)  # the spelling does not change
    np.testing.assert_allclose(plain.weights[0], np.ones(10))


def test_regression_targets_are_standardized_in_log_space_where_values_span_decades():
    values = np.array([[1.0, 1.0], [10.0, 2.0], [100.0, 3.0], [np.nan, np.inf], [1000.0, 4.0]])
    aux = regression_targets(values)
    assert np.isnan(aux[3]).all()  # missing and special values are not regressed
    kept = aux[[0, 1, 2, 4]]
    np.testing.assert_allclose(kept.mean(0), 0.0, atol=1e-12)
    np.testing.assert_allclose(kept.std(0), 1.0)
    steps = np.diff(kept[:, 0])
    np.testing.assert_allclose(steps, steps[0], rtol=0.05)  # four decades: even steps in log space
    np.testing.assert_allclose(np.diff(kept[:, 1]), np.diff(kept[:, 1])[0])  # one decade or less: linear
    context = regression_targets(values, trained=[True, False])
    assert np.isnan(context[:, 1]).all()  # a context objective is given, not learned
