"""Readouts: a new objective as a ridge regression over a model's own predictions, with no training."""

import json

import numpy as np
import pytest
from scipy.stats import spearmanr

from coderlm import RegressionLM
from coderlm.cli import main
from coderlm.data.toy import line_count_task
from coderlm.decoding import central_interval
from coderlm.decoding.calibration import Calibration, combine
from coderlm.options import OptionError
from coderlm.readout import Readout, cross_calibration, fit_readout, nearest_input

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


def words_file(path, seed: int):
    """A dataset file of 12 rows with a new objective, ``words``."""
    texts, _ = line_count_task(12, seed=seed)
    path.write_text("".join(json.dumps({"text": t, "targets": {"words": 1 + len(t.split())}}) + "\n" for t in texts))
    return path


def test_cli_readout(two_objectives, tmp_path, capsys):
    base, data = two_objectives.save(tmp_path / "base"), words_file(tmp_path / "dev.jsonl", seed=5)
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


def noisy_device(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A model's samples (n, 16, 3) of three known latencies, tight around its guesses, and a new device that is
    a mix of them with an error the samples know nothing of (0.3 in log space)."""
    rng = np.random.default_rng(seed)
    guess = rng.normal(0, 1, size=(n, 1, 3))
    samples = np.exp(guess + 0.02 * rng.normal(size=(n, 16, 3)))
    return samples, np.exp(0.7 * guess[:, 0, 0] + 0.3 * guess[:, 0, 2] + 0.3 * rng.normal(size=n))


def test_cross_conformal_calibration_on_the_fitted_rows_covers_what_the_raw_intervals_miss():
    samples, new = noisy_device(60, seed=0)
    test_samples, test_new = noisy_device(4000, seed=1)
    readout = fit_readout("new", np.median(samples, 1), new, inputs=[0, 1, 2])
    read = readout.apply(test_samples)[..., None]
    raw = central_interval(read, 0.9)[:, 0]
    calibration = cross_calibration(samples, new, [0, 1, 2], "new", nearest=False)
    wide = calibration.interval(read, 0.9)[:, 0]
    inside = lambda b: ((b[:, 0] <= test_new) & (test_new <= b[:, 1])).mean()  # noqa: E731
    assert inside(raw) < 0.3 and 0.84 < inside(wide) < 0.97  # 60 scores: the 55th smallest widens
    assert calibration.kind == "cross-conformal" and calibration.size == 60 and calibration.log == [True]
    assert cross_calibration(samples, new, [0, 1, 2], "new", nearest=True).size == 60
    with pytest.raises(ValueError, match="at least 4"):
        cross_calibration(samples[:3], new[:3], [0, 1, 2], "new", nearest=False)


def test_calibrations_combine_by_objective_name_the_later_winning():
    one = {0.9: [np.array([0.1, 0.2]), np.array([]), np.array([0.5])]}
    first = Calibration(one, [True, False, True])
    second = Calibration({0.9: [np.array([1.0, 2.0, 3.0])]}, [False], kind="cross-conformal")
    joined = combine([(first, ["a", "b", "c"]), (second, ["c"])], ["a", "b", "d", "c"])
    assert [s.tolist() for s in joined.scores[0.9]] == [[0.1, 0.2], [], [], [1.0, 2.0, 3.0]]
    assert joined.log == [True, False, False, False] and joined.kind == "split-conformal + cross-conformal"
    assert Calibration.from_dict(joined.to_dict()).kind == joined.kind
    assert combine([(first, ["a", "b", "c"])], ["x"]) is None


def test_a_calibrated_readout_keeps_its_scores_beside_the_others_through_save_and_load(two_objectives, tmp_path):
    rlm = RegressionLM.load(two_objectives.save(tmp_path / "base"))
    texts, _ = line_count_task(20, seed=6)
    rlm.fit_readout(texts, [len(t) ** 2 for t in texts], "squared", calibrate=True)
    assert [len(s) for s in rlm.calibration_.scores[0.9]] == [0, 0, 20] and rlm.calibration_.promised()[-1] == 0.95
    rlm.fit_readout(texts[:12], [len(t) for t in texts[:12]], "plain", calibrate=True)
    assert [len(s) for s in rlm.calibration_.scores[0.9]] == [0, 0, 20, 12]
    rlm.fit_readout(texts, [len(t) + 1 for t in texts], "squared")  # replaced, not calibrated: its scores go
    assert rlm.objectives_[-2:] == ["plain", "squared"]
    assert [len(s) for s in rlm.calibration_.scores[0.9]] == [0, 0, 12, 0]
    loaded = RegressionLM.load(rlm.save(tmp_path / "with"))
    assert loaded.calibration_.kind == "cross-conformal" and loaded.predict_interval(texts, 0.9).shape == (20, 4, 2)
    known = np.c_[[t.count("\n") + 1 for t in texts], np.full((20, 3), np.nan)]  # held-out rows of "lines" only
    loaded.calibrate(texts, known)  # split conformal for "lines"; "plain" keeps its leave-one-out scores
    assert [len(s) for s in loaded.calibration_.scores[0.9]] == [20, 0, 12, 0]
    assert loaded.calibration_.kind == "split-conformal + cross-conformal"


def test_cli_readout_calibrate(two_objectives, tmp_path, capsys):
    base, data = two_objectives.save(tmp_path / "base"), words_file(tmp_path / "dev.jsonl", seed=7)
    out = tmp_path / "dev"
    assert main(["readout", "--model", str(base), "--data", str(data), "--out", str(out), "--calibrate"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["calibration"] == {"kind": "cross-conformal", "promised": [0.5, 0.8, 0.9]}  # 12 rows: not 95%
    assert RegressionLM.load(out).calibration_.size == 12
