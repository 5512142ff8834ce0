"""The small-data recipe: a new number decoder on few rows trains at 3e-4 with trailing digits down-weighted."""

import json

import pytest

from coderlm import RegressionLM
from coderlm.data.toy import line_count_task
from coderlm.training.config import SMALL_DATA_EPOCHS, SMALL_DATA_RECIPE, SMALL_DATA_ROWS, small_data_defaults

TINY = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}


def test_the_recipe_applies_to_many_passes_over_few_rows_only():
    many = {"steps": 2000, "batch_size": 32}  # 64,000 rows drawn: >= 50 passes below 1,280 rows
    assert small_data_defaults(SMALL_DATA_ROWS - 1, many) == SMALL_DATA_RECIPE
    assert small_data_defaults(10, {}) == {"learning_rate": 3e-4, "digit_decay": 0.3}  # 1,000 steps of 32
    assert small_data_defaults(SMALL_DATA_ROWS, many) == {}
    assert small_data_defaults(50_000, many) == {}


def test_few_passes_keep_the_plain_recipe():
    assert small_data_defaults(300, {"steps": 250, "batch_size": 32}) == {}  # 27 passes: 3e-4 would underfit
    assert small_data_defaults(300, {"steps": 500, "batch_size": 32}) == SMALL_DATA_RECIPE  # 53 passes
    assert small_data_defaults(SMALL_DATA_EPOCHS, {"steps": SMALL_DATA_EPOCHS, "batch_size": 1}) == {}  # 1 pass
    assert small_data_defaults(10, {"steps": 1, "batch_size": 500}) == SMALL_DATA_RECIPE  # exactly 50


def test_options_the_caller_sets_win():
    assert small_data_defaults(100, {"learning_rate": 1e-3}) == {"digit_decay": 0.3}
    assert small_data_defaults(100, {"digit_decay": 1.0, "learning_rate": 2e-3}) == {}


def peak_learning_rate(run_dir) -> float:
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return max(record["lr"] for record in map(json.loads, lines) if "lr" in record)


def test_a_small_fit_trains_with_the_recipe_and_reports_it(tmp_path):
    texts, targets = line_count_task(20, seed=0)  # 40 steps of 32: 64 passes
    rlm = RegressionLM(vocab_size=300, model=TINY, training={"steps": 40, "log_every": 1, "progress": False})
    rlm.fit(texts, targets, run_dir=tmp_path / "run")
    assert rlm.fit_report_["defaults"] == SMALL_DATA_RECIPE
    assert peak_learning_rate(tmp_path / "run") == pytest.approx(3e-4)


def test_a_set_learning_rate_is_kept_and_reported_apart(tmp_path):
    texts, targets = line_count_task(20, seed=0)
    training = {"steps": 40, "log_every": 1, "progress": False, "learning_rate": 1e-3}
    rlm = RegressionLM(vocab_size=300, model=TINY, training=training).fit(texts, targets, run_dir=tmp_path / "run")
    assert rlm.fit_report_["defaults"] == {"digit_decay": 0.3}
    assert peak_learning_rate(tmp_path / "run") == pytest.approx(1e-3)


def test_fine_tuning_keeps_its_own_rate(tmp_path):
    texts, targets = line_count_task(20, seed=0)
    base = RegressionLM(vocab_size=300, model=TINY, training={"steps": 2, "progress": False}).fit(texts, targets)
    tuned = RegressionLM(training={"steps": 40, "log_every": 1, "progress": False})
    tuned.fit(texts, targets, init=base, run_dir=tmp_path / "run")
    assert tuned.fit_report_["defaults"] == {"learning_rate": 5e-5}
    assert peak_learning_rate(tmp_path / "run") == pytest.approx(5e-5)


def test_few_passes_report_no_defaults():
    texts, targets = line_count_task(20, seed=0)  # 2 steps of 32: 3 passes
    rlm = RegressionLM(vocab_size=300, model=TINY, training={"steps": 2, "progress": False}).fit(texts, targets)
    assert "defaults" not in rlm.fit_report_
