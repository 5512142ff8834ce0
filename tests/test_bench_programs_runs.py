"""The programs bench's run folders (bench/programs.py --runs): a finished RLM is loaded, a stopped one
continues from its latest checkpoint, and the model either way is the one the uninterrupted run returned."""

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from coderlm import RegressionLM
from coderlm.model.files import CONFIG_FILE

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from program_rlm import exact_columns, fit_or_resume, pooled_row
from program_scores import OBJECTIVES, scores

TEXTS = [f"def f{i}(x):\\n    return [0] * {i}" for i in range(24)]
TARGETS = [[10.0 * (i + 1), 0.5 + i] for i in range(24)]


def rlm() -> RegressionLM:
    training = {"steps": 12, "batch_size": 8, "eval_every": 4, "checkpoint_every": 4, "val_metric": "spearman"}
    return RegressionLM(
        vocab_size=300, model={"encoder_dim": 32, "decoder_dim": 32, "encoder_layers": 1}, training=training
    )


def fit(model: RegressionLM, run: Path | None) -> RegressionLM:
    return fit_or_resume(
        model,
        run,
        texts=TEXTS[:18],
        targets=TARGETS[:18],
        objectives=["memory", "runtime"],
        val_texts=TEXTS[18:],
        val_targets=TARGETS[18:],
    )


def samples(model: RegressionLM) -> np.ndarray:
    return model.sample(TEXTS[18:], num_samples=4, seed=0)


def test_without_a_folder_it_fits(tmp_path):
    model = fit(rlm(), None)
    assert model.fit_report_["steps"] == 12 and not list(tmp_path.iterdir())


def test_a_finished_run_is_loaded_and_a_stopped_one_continues(tmp_path, capsys):
    run = tmp_path / "problem-scratch-seed0"
    first = fit(rlm(), run)
    assert (run / CONFIG_FILE).is_file() and "new run" in capsys.readouterr().out
    expected = samples(first)

    loaded = fit(rlm(), run)  # nothing trained again
    assert "finished, loaded" in capsys.readouterr().out
    np.testing.assert_array_equal(samples(loaded), expected)
    assert loaded.fit_report_["kept_steps"] == first.fit_report_["kept_steps"]

    # as if stopped after its last checkpoint but before the model was written
    copy = tmp_path / "stopped"
    shutil.copytree(run, copy)
    (copy / CONFIG_FILE).unlink()
    resumed = fit(rlm(), copy)
    assert "continued from its latest checkpoint" in capsys.readouterr().out
    assert (copy / CONFIG_FILE).is_file()
    np.testing.assert_array_equal(samples(resumed), expected)  # the same kept weights, restored
    assert resumed.fit_report_["kept_steps"] == first.fit_report_["kept_steps"]
    latest = copy / "checkpoints" / (copy / "checkpoints" / "latest").read_text().strip()
    trained_before = json.loads((latest / "trainer.json").read_text())["extra"]["seconds"]
    assert resumed.fit_report_["train_seconds"] >= trained_before > 0  # the earlier sitting's time counts


def test_a_different_setting_is_refused_rather_than_mixed(tmp_path):
    run = tmp_path / "run"
    fit(rlm(), run)
    (run / CONFIG_FILE).unlink()
    other = rlm()
    other.training = {**other.training, "ema_decay": 0.0, "average_best": 1}
    with pytest.raises(ValueError, match="resume with the same setting"):
        fit(other, run)


def test_saved_models_pool_by_the_targets_each_learned(tmp_path):
    both = fit_or_resume(rlm(), tmp_path / "both", texts=TEXTS[:18], targets=TARGETS[:18], objectives=OBJECTIVES)
    runtime = [[row[1]] for row in TARGETS[:18]]
    one = fit_or_resume(rlm(), tmp_path / "runtime", texts=TEXTS[:18], targets=runtime, objectives=OBJECTIVES[1:])
    test = {"split": "problem", "measured": np.array(TARGETS[18:]), "tasks": ["go"] * 6, "groups": list("aabbcc")}
    row = pooled_row([tmp_path / "both", tmp_path / "runtime"], TEXTS[18:], test, 4)
    assert row["models"] == 2 and row["pooled"] == "both,runtime"
    # memory comes from the two-target model alone: the runtime-only model adds nothing to its column
    alone = np.median(both.sample(TEXTS[18:], num_samples=4, seed=0), axis=1)
    assert row["go/mem"] == pytest.approx(scores(alone, "rlm", test)["go/mem"])
    pooled = np.concatenate(
        [both.sample(TEXTS[18:], 4, seed=0)[:, :, 1], one.sample(TEXTS[18:], 4, seed=0)[:, :, 0]], 1
    )
    assert row["go/time"] == pytest.approx(
        scores(np.stack([alone[:, 0], np.median(pooled, 1)], 1), "rlm", test)["go/time"]
    )


def test_exact_columns_place_each_learned_target(tmp_path):
    """``--exact``: each model's exact medians in the columns of the targets it learned, NaN elsewhere."""
    runtime = [[row[1]] for row in TARGETS[:18]]
    one = fit_or_resume(rlm(), tmp_path / "runtime", texts=TEXTS[:18], targets=runtime, objectives=OBJECTIVES[1:])
    placed = exact_columns(one, TEXTS[18:])
    assert placed.shape == (6, len(OBJECTIVES)) and np.isnan(placed[:, 0]).all()
    np.testing.assert_array_equal(placed[:, 1], one.predict(TEXTS[18:], point="exact")[:, 0])
