"""The RLM's training loss: likelihood, and the ordinal term that makes near misses cheaper."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from coderlm import RegressionLM
from coderlm.training.objective import ordinal_distance


def test_ordinal_distance_is_the_expected_rank_distance_within_the_group():
    digits = torch.arange(2, 12)  # token ids of <0>..<9>
    logits = torch.full((1, 3, 14), -1e4)
    logits[0, 0, 2 + 3] = 0.0  # all mass on <3>
    logits[0, 1, 2 + 4] = logits[0, 1, 2 + 8] = 0.0  # half on <4>, half on <8>
    targets = torch.tensor([[2 + 5, 2 + 5, 13]])  # true <5>, <5>, and a token outside the group
    distance = ordinal_distance(logits, targets, [digits])
    torch.testing.assert_close(distance, torch.tensor([[2.0, 2.0, 0.0]]))  # |3-5|; (1 + 3) / 2; not a digit


def test_ordinal_distance_is_zero_for_a_sure_right_answer_and_grows_with_the_miss():
    digits = torch.arange(2, 12)
    targets = torch.tensor([[2 + 7]])
    costs = []
    for guess in (7, 6, 2):
        logits = torch.full((1, 1, 12), -1e4)
        logits[0, 0, 2 + guess] = 0.0
        costs.append(float(ordinal_distance(logits, targets, [digits])))
    assert costs == pytest.approx([0.0, 1.0, 5.0])


@pytest.mark.parametrize("options", [{"ordinal_loss": 0.5}, {"digit_decay": 0.3}])
def test_fit_with_the_loss_options_learns_the_targets(options):
    texts = [f"x = {n}" for n in range(40)]
    values = np.array([float(10 + 5 * n) for n in range(40)])
    rlm = RegressionLM(
        vocab_size=300,
        max_input_len=16,
        model={"encoder_dim": 32, "decoder_dim": 32, "encoder_layers": 1, "decoder_layers": 1}
        | {"encoder_heads": 2, "decoder_heads": 2},
        training={"steps": 150, "batch_size": 16, "progress": False, "learning_rate": 3e-3} | options,
        num_samples=8,
    )
    rlm.fit(texts, values)
    losses = rlm.loss_history_
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:10])
    assert np.isfinite(rlm.predict(texts[:4])).all()
