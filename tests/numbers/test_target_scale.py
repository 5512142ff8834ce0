from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import spearmanr

from coderlm.numbers import P10, NumberCodec
from coderlm.numbers.target_scale import (
    CONCENTRATED,
    HIGH,
    LOW,
    MAX_KNOTS,
    QuantileScale,
    leading_share,
    scaled_objectives,
)


def skewed(n: int = 500, seed: int = 0) -> np.ndarray:
    """Accuracy-like (most values 84-91, a tail to 10) and a latency-like objective over decades."""
    rng = np.random.default_rng(seed)
    accuracy = np.clip(91 - rng.gamma(1.5, 3.0, n), 10, None)
    latency = np.exp(rng.normal(1.5, 1.2, n))
    return np.stack([accuracy, latency], 1)


def test_spells_ranks_evenly_and_maps_back() -> None:
    values = skewed()
    scale = QuantileScale.fit(values)
    spelled = scale.forward(values)
    assert spelled.min(0) == pytest.approx([LOW, LOW]) and spelled.max(0) == pytest.approx([HIGH, HIGH])
    for j in range(2):  # strictly increasing, and evenly spread: each decile of the ranks in one unit of 0.8
        assert spearmanr(spelled[:, j], values[:, j]).statistic == pytest.approx(1.0)
        counts = np.histogram(spelled[:, j], bins=10, range=(LOW, HIGH))[0]
        assert counts.min() >= 40 and counts.max() <= 60
    np.testing.assert_allclose(scale.inverse(spelled), values, rtol=1e-12)
    between = (values[:-1] + values[1:]) / 2  # values never seen map back too
    np.testing.assert_allclose(scale.inverse(scale.forward(between)), between, rtol=1e-10)


def test_ties_keep_the_map_strictly_increasing() -> None:
    values = np.array([[1.0], [1.0], [1.0], [2.0], [5.0], [5.0]])
    scale = QuantileScale.fit(values)
    assert scale.values == ((1.0, 2.0, 5.0),)
    spelled = scale.forward(values)[:, 0]
    assert spelled[0] == spelled[2] == LOW and spelled[-1] == HIGH and LOW < spelled[3] < HIGH


def test_beyond_the_training_range_the_map_continues_linearly() -> None:
    scale = QuantileScale.fit(np.array([[0.0], [1.0], [3.0]]))
    slope = (HIGH - LOW) / 3.0
    assert scale.forward(np.array([[6.0]]))[0, 0] == pytest.approx(HIGH + 3.0 * slope)
    assert scale.forward(np.array([[-3.0]]))[0, 0] == pytest.approx(LOW - 3.0 * slope)
    assert scale.inverse(scale.forward(np.array([[-3.0], [6.0]])))[:, 0] == pytest.approx([-3.0, 6.0])


def test_a_single_training_value_is_a_shift_and_non_finite_values_pass() -> None:
    scale = QuantileScale.fit(np.array([[7.0, 1.0], [7.0, 2.0], [math.nan, math.inf]]))
    assert scale.values[0] == (7.0,) and scale.forward(np.array([[8.0, 1.5]]))[0, 0] == pytest.approx(6.5)
    out = scale.forward(np.array([[math.nan, -math.inf]]))
    assert math.isnan(out[0, 0]) and out[0, 1] == -math.inf
    with pytest.raises(ValueError, match="objective 1 has no finite training value"):
        QuantileScale.fit(np.array([[1.0, math.nan], [2.0, math.nan]]))


def test_many_distinct_values_keep_at_most_max_knots() -> None:
    values = np.random.default_rng(1).normal(size=(5000, 1))
    scale = QuantileScale.fit(values)
    assert len(scale.values[0]) <= MAX_KNOTS
    assert scale.values[0][0] == values.min() and scale.values[0][-1] == values.max()
    assert spearmanr(scale.forward(values)[:, 0], values[:, 0]).statistic > 0.9999


def test_codec_spells_scaled_values_decodes_units_and_round_trips_its_description() -> None:
    values = skewed(200)
    codec = NumberCodec(P10(), 2, ("nan",), QuantileScale.fit(values))
    ids = codec.encode(values).ids
    exponents = {codec.vocab[i] for i in ids[:, 1]} | {codec.vocab[i] for i in ids[:, 1 + codec.length]}
    assert exponents == {"<E-3>"}  # one decade: every value spelled in [1.5, 9.5]
    np.testing.assert_allclose(codec.decode(ids), values, rtol=1e-2)  # four digits of rank: coarser in sparse tails
    assert np.isnan(codec.decode(codec.encode(np.array([[math.nan, 1.0]])).ids)[0, 0])
    again = NumberCodec.from_dict(codec.to_dict())
    assert again == codec and "scale" not in NumberCodec(P10(), 2).to_dict()
    with pytest.raises(ValueError, match="target scale has 2 objectives, the codec 3"):
        NumberCodec(P10(), 3, (), codec.scale)


def test_bad_descriptions_name_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="must increase"):
        QuantileScale(((1.0, 1.0),), ((2.0, 3.0),))
    with pytest.raises(ValueError, match="expected kind 'quantile'"):
        QuantileScale.from_dict({"kind": "minmax"})


def test_auto_ranks_only_objectives_whose_leading_digits_are_shared() -> None:
    values = skewed(400)  # accuracy-like: most values 84-91 share "8"; latency-like: spread over decades
    assert leading_share(values[:, 0]) >= CONCENTRATED > leading_share(values[:, 1])
    assert leading_share(np.array([0.0, 0.0, -3.0, math.nan])) == pytest.approx(2 / 3)
    assert scaled_objectives(values, "auto") == [True, False]
    assert scaled_objectives(values, "raw") == [False, False] and scaled_objectives(values, "quantile") == [True, True]
    scale = QuantileScale.fit(values, [True, False])
    assert scale.ranked == [True, False] and scale.values[1] == ()
    spelled = scale.forward(values)
    np.testing.assert_array_equal(spelled[:, 1], values[:, 1])  # as it is
    assert spelled[:, 0].min() == pytest.approx(LOW)
    assert QuantileScale.from_dict(scale.to_dict()) == scale


def test_linear_maps_the_training_range_onto_one_decade_in_proportion() -> None:
    values = skewed()
    scale = QuantileScale.choose(values, "linear")
    spelled = scale.forward(values)
    for j in range(values.shape[1]):
        low, high = values[:, j].min(), values[:, j].max()
        expected = LOW + (HIGH - LOW) * (values[:, j] - low) / (high - low)
        np.testing.assert_allclose(spelled[:, j], expected)
    np.testing.assert_allclose(scale.inverse(spelled), values)
    beyond = scale.forward(np.array([[values[:, 0].max() + 1.0, values[:, 1].min() - 1.0]]))
    assert beyond[0, 0] > HIGH and beyond[0, 1] < LOW  # extrapolated with the same slope
    constant = QuantileScale.choose(np.full((5, 1), 7.0), "linear")
    assert constant.forward(np.array([[7.0]]))[0, 0] == (LOW + HIGH) / 2
