"""Readouts: a new objective as a ridge regression over a model's own predictions, with no training."""

import json

import numpy as np
import pytest
from scipy.stats import spearmanr

from coderlm import RegressionLM
from coderlm.cli import main
from coderlm.data.toy import line_count_task
from coderlm.options import OptionError
from coderlm.readout import Readout, fit_readout, nearest_input

TINY = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}


def test_a_mix_of_known_objectives_is_recovered_in_log_space():
    rng = np.random.default_rng(0)
    known = np.exp(rng.normal(0, 1, size=(40, 3)))  # three devices' latencies
    new = known[:, 0] ** 0.7 * known[:, 2] ** 0.3  # a device like a mix of the first and the third
    readout = fit_readout("new", known[:20], new[:20], inputs=[0, 1, 2])
    assert readout.log and readout.rows == 20
    assert readout.weights[0] > readout.weights[2] > abs(readout.weights[1])
    assert spearmanr(readout.apply(known[20:]), new[20:]).statistic > 0.97
    again = Readout.from_dict(readout.to_dict(["a", "b", "c"]), ["a", "b", "c"])
    np.testing.assert_allclose(again.apply(known), readout.apply(known))
    samples = known[:5, None, :].repeat(4, axis=1)  # (n, S, k): applied to every sample
    assert readout.apply(samples).shape == (5, 4)


def test_values_that_are_not_all_positive_are_read_out_in_their_units_and_bad_input_is_refused():
    x = np.linspace(-1, 1, 10)[:, None]
    readout = fit_readout("y", x, 2 * x[:, 0] + 1, inputs=[0])
    assert not readout.log and readout.apply(np.array([[0.5]]))[0] == pytest.approx(2.0, abs=0.2)
    with pytest.raises(ValueError, match="2 measured input"):
        fit_readout("y", x[:2], x[:2, 0], inputs=[0])
    with pytest.raises(ValueError, match="must be finite"):
        fit_readout("y", x, np.r_[np.nan, x[1:, 0]], inputs=[0])
    with pytest.raises(ValueError, match=r"reads \['zz'\], which the model does not write"):
        Readout.from_dict(readout.to_dict(["zz"]), ["a"])


@pytest.fixture(scope="module")
def two_objectives() -> RegressionLM:
    texts, targets = line_count_task(64, seed=0)
    rlm = RegressionLM(vocab_size=300, max_input_len=96, model=TINY, num_samples=8,
                       training={"steps": 30, "batch_size": 16, "progress": False})  # fmt: skip
    return rlm.fit(texts, [[t, len(x)] for x, t in zip(texts, targets, strict=True)], objectives=["lines", "chars"])


def test_a_readout_is_written_last_from_each_sample_and_survives_save_and_load(two_objectives, tmp_path):
    rlm = RegressionLM.load(two_objectives.save(tmp_path / "base"))
    texts, _ = line_count_task(20, seed=1)
    readout = rlm.fit_readout(texts, [len(t) ** 2 for t in texts], "chars_squared")
    assert rlm.objectives_ == ["lines", "chars", "chars_squared"] and readout.inputs == [0, 1]
    samples = rlm.sample(texts, seed=3)
    assert samples.shape == (20, 8, 3)
    np.testing.assert_allclose(samples[..., 2], readout.apply(samples[..., :2]))
    rlm.save(tmp_path / "with")
    loaded = RegressionLM.load(tmp_path / "with")
    assert loaded.objectives_ == rlm.objectives_
    np.testing.assert_allclose(loaded.sample(texts, seed=3), samples)
    calibration = loaded.calibrate(texts, np.c_[np.full((20, 2), np.nan), [len(t) ** 2 for t in texts]])
    assert [len(s) for s in calibration.scores[0.9]] == [0, 0, 20]
    assert loaded.predict_interval(texts, 0.9).shape == (20, 3, 2)


def test_readout_errors_name_the_option(two_objectives):
    texts, _ = line_count_task(8, seed=2)
    with pytest.raises(OptionError, match="is decoded by the model already"):
        two_objectives.fit_readout(texts, [1.0] * 8, "lines")
    with pytest.raises(OptionError, match="must name some of the objectives the model decodes"):
        two_objectives.fit_readout(texts, [1.0] * 8, "new", inputs=["speed"])


def test_a_model_with_a_readout_fine_tunes_from_its_decoded_objectives(two_objectives):
    rlm = RegressionLM(num_samples=8)
    texts, _ = line_count_task(16, seed=4)
    with_readout = two_objectives
    with_readout.fit_readout(texts, [len(t) for t in texts], "chars2")
    try:
        rlm.training = {"steps": 1, "progress": False}
        rlm.fit(texts, [len(t.split()) for t in texts], objectives=["words"], init=with_readout, context="init")
        assert rlm.objectives_ == ["lines", "chars", "words"]
    finally:
        with_readout.readouts_, with_readout.objectives_ = [], ["lines", "chars"]


def test_cli_readout(two_objectives, tmp_path, capsys):
    base = two_objectives.save(tmp_path / "base")
    texts, _ = line_count_task(12, seed=5)
    data = tmp_path / "dev.jsonl"
    data.write_text("".join(json.dumps({"text": t, "targets": {"words": 1 + len(t.split())}}) + "\n" for t in texts))
    out = tmp_path / "dev"
    assert main(["readout", "--model", str(base), "--data", str(data), "--out", str(out), "--inputs", "ch*"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["readouts"]["words"]["inputs"] == ["chars"] and summary["readouts"]["words"]["rows"] == 12
    assert main(["readout", "--model", str(base), "--data", str(data), "--out", str(tmp_path / "near"),
                 "--nearest"]) == 0  # fmt: skip
    assert len(json.loads(capsys.readouterr().out)["readouts"]["words"]["inputs"]) == 1
    assert RegressionLM.load(out).objectives_ == ["lines", "chars", "words"]
    assert main(["predict", "--model", str(out), str(data)]) == 0
    assert "words" in capsys.readouterr().out
    assert main(["readout", "--model", str(base), "--data", str(data), "--out", str(out), "--inputs", "zz*"]) == 2
    assert "matches none of the model's objectives" in capsys.readouterr().err
    other = tmp_path / "known.jsonl"
    other.write_text(json.dumps({"text": "a", "targets": {"lines": 1}}) + "\n")
    assert main(["readout", "--model", str(base), "--data", str(other), "--out", str(out)]) == 2
    assert "nothing to read out" in capsys.readouterr().err


def test_nearest_reads_out_of_the_one_input_that_ranks_the_targets_best(two_objectives):
    rng = np.random.default_rng(1)
    predicted = rng.normal(size=(30, 3))
    targets = np.exp(predicted[:, 2] + 0.1 * rng.normal(size=30))
    assert nearest_input(predicted, targets, [0, 1, 2]) == 2 and nearest_input(predicted, targets, [0, 1]) in (0, 1)
    texts, _ = line_count_task(20, seed=11)
    guessed = two_objectives.predict(texts)
    wanted = [len(t) for t in texts]
    best = int(np.argmax([spearmanr(guessed[:, j], wanted).statistic for j in range(2)]))
    try:
        readout = two_objectives.fit_readout(texts, wanted, "nearest", nearest=True)
        assert readout.inputs == [best] and readout.weights.shape == (1,)
    finally:
        two_objectives.readouts_, two_objectives.objectives_ = [], ["lines", "chars"]
