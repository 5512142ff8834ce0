"""Targets as training tensors: spelling, missing values, and the per-token loss weights."""

from __future__ import annotations

import numpy as np

from coderlm.numbers import P10, NumberCodec
from coderlm.training.examples import encode_targets


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
