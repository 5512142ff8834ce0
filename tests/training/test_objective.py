"""The RLM's training loss: likelihood, and the ordinal term that makes near misses cheaper."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from coderlm import RegressionLM
from coderlm.model.transformer import EncoderDecoder
from coderlm.training.objective import NumberLoss, ordinal_distance


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


@pytest.mark.parametrize(
    "options", [{"ordinal_loss": 0.5}, {"digit_decay": 0.3}, {"aux_regression": 1.0}, {"target_noise": 0.1}]
)
def test_fit_with_the_loss_options_learns_the_targets(options):
    texts = [f"x = {n}" for n in range(40)]
    values = np.array([float(10 + 5 * n) for n in range(40)])
    rlm = RegressionLM(
        vocab_size=300,
        max_input_len=16,
        model={"encoder_dim": 32, "decoder_dim": 32, "encoder_layers": 1, "decoder_layers": 1}
        | {"encoder_heads": 2, "decoder_heads": 2},
        training={"steps": 150, "batch_size": 16, "progress": False, "learning_rate": 3e-3, "target_noise": 0.0}
        | options,
        num_samples=8,
    )
    rlm.fit(texts, values)
    losses = rlm.loss_history_
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:10])
    assert np.isfinite(rlm.predict(texts[:4])).all()


def test_the_auxiliary_head_adds_its_error_in_training_and_validation_sees_the_number_loss_alone():
    rlm = RegressionLM(
        vocab_size=300,
        max_input_len=16,
        model={"encoder_dim": 32, "decoder_dim": 32, "encoder_layers": 1, "decoder_layers": 1},
        training={"steps": 1, "progress": False},
    ).fit([f"x = {n}" for n in range(8)], [float(n) for n in range(8)])
    network: EncoderDecoder = rlm.network_
    objective = NumberLoss(network, regression=2.0, regression_outputs=2)
    torch.manual_seed(0)
    batch = {
        "ids": torch.randint(5, 50, (3, 6)),
        "mask": torch.ones(3, 6, dtype=torch.bool),
        "targets": torch.randint(0, 10, (3, 4)),
        "weights": torch.ones(3, 4),
    }
    plain = network.loss(**batch)
    torch.testing.assert_close(objective(batch), plain)  # no aux_values (validation): the number loss
    values = torch.tensor([[0.5, float("nan")], [-1.0, 2.0], [1.0, float("nan")]])
    with torch.no_grad():
        pooled = (network.encoder(batch["ids"], batch["mask"])).mean(1)
        predicted = objective.aux_head(pooled)
    present = ~values.isnan()
    expected = plain + 2.0 * (predicted - values.nan_to_num())[present].square().mean()
    torch.testing.assert_close(objective(batch | {"aux_values": values}), expected)
    assert {name.split(".")[0] for name, _ in objective.named_parameters()} == {"model", "aux_head"}


def test_fit_with_the_auxiliary_head_keeps_the_models_files_unchanged(tmp_path):
    texts = [f"x = {n}" for n in range(24)]
    options = {
        "vocab_size": 300,
        "max_input_len": 16,
        "model": {"encoder_dim": 32, "decoder_dim": 32, "encoder_layers": 1, "decoder_layers": 1},
    }
    plain = RegressionLM(**options, training={"steps": 4, "progress": False}).fit(texts, [float(n) for n in range(24)])
    aux = RegressionLM(**options, training={"steps": 4, "progress": False, "aux_regression": 1.0})
    aux.fit(texts, [float(n) for n in range(24)], run_dir=tmp_path / "run")
    assert aux.network_.state_dict().keys() == plain.network_.state_dict().keys()  # the head is dropped
    resumed = RegressionLM(**options, training={"steps": 6, "progress": False, "aux_regression": 1.0})
    resumed.fit(texts, [float(n) for n in range(24)], run_dir=tmp_path / "run", resume=True)  # head restored
    assert resumed.fit_report_["steps"] == 6


def test_a_resumed_fit_draws_the_same_target_noise_as_an_uninterrupted_one(tmp_path):
    texts = [f"x = {n}" for n in range(24)]
    targets = [float(3 * n + 1) for n in range(24)]
    options = {
        "vocab_size": 300,
        "max_input_len": 16,
        "model": {"encoder_dim": 32, "decoder_dim": 32, "encoder_layers": 1, "decoder_layers": 1},
    }
    training = {"steps": 8, "batch_size": 8, "checkpoint_every": 4, "progress": False, "target_noise": 0.5}
    full = RegressionLM(**options, training=training).fit(texts, targets, run_dir=tmp_path / "full")
    cut = RegressionLM(**options, training=training).fit(texts, targets, run_dir=tmp_path / "cut")
    (tmp_path / "cut" / "checkpoints" / "latest").write_text("step-0000004\n")  # as if stopped after step 4
    resumed = RegressionLM(**options, training=training).fit(texts, targets, run_dir=tmp_path / "cut", resume=True)
    assert resumed.loss_history_ == full.loss_history_[4:] == cut.loss_history_[4:]  # the same draws
    exact = RegressionLM(**options, training=training | {"target_noise": 0.0}).fit(texts, targets)
    assert exact.loss_history_[4:] != full.loss_history_[4:]  # the noise changed what was learned
    assert full.fit_report_["target_noise"] == 0.5 and exact.fit_report_["target_noise"] == 0.0
