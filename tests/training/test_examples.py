"""Targets as training tensors: spelling, missing values, and the per-token loss weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from coderlm.numbers import P10, NumberCodec
from coderlm.options import OptionError
from coderlm.text.kind import CELL, ONNX, OTHER
from coderlm.training.config import TrainConfig
from coderlm.training.examples import TargetJitter, encode_targets, regression_targets
from coderlm.training.start_rate import start_options


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


def test_target_jitter_spells_gaussian_draws_around_each_value_with_the_objectives_spread():
    codec = NumberCodec(P10(digits=4), 2)
    rng = np.random.default_rng(0)
    values = np.column_stack([rng.uniform(5, 20, 50), 10.0 ** rng.uniform(0, 4, 50)])  # linear; four decades
    jitter = TargetJitter(codec, values, 0.2, "error")
    torch.manual_seed(0)
    draws = np.stack([codec.decode(jitter(np.array([3, 7]))) for _ in range(2000)])  # (draws, 2 rows, 2)
    np.testing.assert_allclose(draws[:, :, 0].mean(0), values[[3, 7], 0], atol=0.05)  # centred on the value
    np.testing.assert_allclose(draws[:, :, 0].std(0), 0.2 * values[:, 0].std(), rtol=0.1)
    logs = np.log10(draws[:, :, 1] / values[[3, 7], 1])  # four decades: the noise is relative (log space)
    np.testing.assert_allclose(np.median(logs, 0), 0.0, atol=0.02)
    np.testing.assert_allclose(logs.std(0), logs.std(0)[0], rtol=0.15)  # the same relative spread at any size
    assert not np.array_equal(draws[0], draws[1])  # spelled afresh at every call


def test_target_jitter_keeps_special_missing_and_context_targets_exact_and_signs_in_range():
    codec = NumberCodec(P10(digits=3), 2, specials=("+inf",))
    values = np.array([[0.0, 1.0], [0.5, 2.0], [1.0, np.inf], [2.0, 4.0]])
    torch.manual_seed(0)
    context = TargetJitter(codec, values, 3.0, "error", trained=[True, False])
    exact = codec.encode(values).ids
    for _ in range(50):
        ids = context(np.arange(4))
        context_part = slice(codec.length, None)  # the context objective (and its inf): as given
        np.testing.assert_array_equal(ids[:, context_part], exact[:, context_part])
        assert (codec.decode(ids)[:, 0] >= 0).all()  # no negative training value: none drawn
    masked = TargetJitter(codec, np.array([[1.0, np.nan], [2.0, 3.0], [3.0, 5.0]]), 1.0, "mask")
    assert masked.sigma[1] == pytest.approx(1.0)  # the missing value does not count in the spread


def test_target_jitter_draws_from_torchs_generator_so_a_resumed_run_draws_the_same():
    codec = NumberCodec(P10(digits=3), 1)
    jitter = TargetJitter(codec, np.linspace(1, 9, 20)[:, None], 0.3, "error")
    torch.manual_seed(5)
    first = jitter(np.arange(20))
    torch.manual_seed(5)
    np.testing.assert_array_equal(jitter(np.arange(20)), first)


def test_target_noise_must_not_be_negative():
    with pytest.raises(OptionError, match="target_noise"):
        TrainConfig(target_noise=-0.1)


def test_small_data_with_a_new_decoder_starts_with_target_noise_a_trained_start_with_its_rate():
    assert TrainConfig().target_noise == 0.1
    assert start_options(None, False, {}, 1999, 28) == {}  # from scratch, few rows, many passes: the defaults
    exact = {"target_noise": 0.0}  # and the rate: TrainConfig's default
    assert start_options(None, False, {}, 2000, 100) == exact  # many rows
    assert start_options(None, False, {}, 300, 27.9) == exact  # few passes
    assert start_options({}, True, {}, 20, 100) == exact | {"learning_rate": 5e-5}  # fine-tuning a trained model
    assert start_options(None, False, {"encoder": "minilm", "train_encoder": False}, 20, 100) == exact  # frozen
    encoder = {"encoder": "enc", "train_encoder": True}  # a pretrained encoder, fine-tuned: a new decoder
    assert start_options(None, False, encoder, 500, 64) == {"learning_rate": 3e-4}  # its rate, with the noise
    assert start_options(None, False, encoder, 2000, 100) == exact | {"learning_rate": 3e-4}  # many rows
    assert start_options(None, False, encoder, 500, 27.9) == exact | {"learning_rate": 3e-4}  # few passes
    assert start_options({"target_noise": 0.2, "learning_rate": 1e-3}, False, {}, 100, 100) == {}  # set: kept
    assert start_options({"target_noise": 0.0}, True, {}, 100, 100) == {"learning_rate": 5e-5}  # each on its own


def test_network_text_from_scratch_starts_at_a_third_of_the_rate():
    net = {"learning_rate": 3e-4}
    assert start_options(None, False, {}, 1999, 28, ONNX) == net  # ONNX text, fewer than 2,000 rows
    assert start_options(None, False, {}, 499, 28, CELL) == net  # cell strings, fewer than 500 rows
    assert start_options(None, False, {}, 500, 28, CELL) == {}  # 500 cell strings: the usual rate
    assert start_options(None, False, {}, 2000, 28, ONNX) == {"target_noise": 0.0}  # many rows
    assert start_options(None, False, {}, 200, 28, OTHER) == {}  # code, a mix of kinds: the usual rate
    assert start_options({}, True, {}, 200, 28, ONNX) == {"learning_rate": 5e-5, "target_noise": 0.0}  # fine-tuning
    frozen = {"encoder": "minilm", "train_encoder": False}
    assert start_options(None, False, frozen, 200, 28, ONNX) == {"target_noise": 0.0}  # the decoder alone trains
    assert start_options({"learning_rate": 1e-3}, False, {}, 200, 28, ONNX) == {}  # a rate given wins


def test_a_fit_from_scratch_keeps_a_moving_average_of_its_weights():
    assert start_options(None, False, {}, 200, 50, steps=600) == {"ema_decay": 0.99}  # 1 - 6 / steps
    assert start_options(None, False, {}, 200, 50, steps=3000)["ema_decay"] == pytest.approx(0.998)
    assert start_options({"ema_decay": 0.0}, False, {}, 200, 50, steps=600) == {}  # set: kept (0 turns it off)
    assert start_options(None, False, {}, 200, 50, steps=11) == {}  # too few steps to average
    assert "ema_decay" not in start_options({}, True, {}, 200, 50, steps=600)  # fine-tuning a trained model
    pretrained = {"encoder": "enc", "train_encoder": True}
    assert "ema_decay" not in start_options(None, False, pretrained, 200, 50, steps=600)  # a pretrained encoder
