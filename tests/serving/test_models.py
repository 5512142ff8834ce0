"""Naming and describing served models, and the options ``coderlm serve`` refuses."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from coderlm import RegressionLM
from coderlm.cli import main
from coderlm.data.toy import line_count_task
from coderlm.serving.config import ServeConfig
from coderlm.serving.models import ServedModel, model_specs


@pytest.mark.parametrize(
    ("specs", "named"),
    [
        (["runs/a"], [("a", "runs/a")]),
        (["fast=runs/a", "runs/b"], [("fast", "runs/a"), ("b", "runs/b")]),
        (["x=runs/lr=1e-3"], [("x", "runs/lr=1e-3")]),
    ],
)
def test_models_are_named_by_folder_or_by_name(specs, named):
    assert model_specs(specs) == [(name, Path(path)) for name, path in named]


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        ([], "no model given"),
        (["runs/a", "other/a"], "model name 'a' is given twice"),
        (["runs/lr=1e-3"], "name it with NAME=RUN"),
    ],
)
def test_model_names_must_be_given_and_unique(specs, message):
    with pytest.raises(ValueError, match=message):
        model_specs(specs)


def test_unreadable_run_files_are_left_out_of_the_description(model_dir, tmp_path, caplog):
    run = shutil.copytree(model_dir, tmp_path / "run")
    (run / "train_summary.json").write_text("{not json")
    served = ServedModel("m", run, batch_size=32)
    info = served.info()
    assert "train_summary" not in info and "train_summary.json: not read" in caplog.text
    assert info["batch_size"] == 32 and served.rlm.batch_size == 16  # seeded calls keep the model's own
    assert served.batched.network_ is served.rlm.network_


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_batch": 0}, "max_batch must be a positive integer, got 0"),
        ({"queue_size": 8, "max_inputs": 16}, "queue_size must be >= max_inputs (16)"),
        ({"onnx_style": "pretty"}, "onnx_style must be one of"),
        ({"max_wait_ms": -1.0}, "max_wait_ms must be >= 0"),
    ],
)
def test_serve_config_refuses_bad_values(options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ServeConfig(**options)


def test_the_command_names_the_flag_or_the_file_at_fault(tmp_path, capsys):
    assert main(["serve", "--model", str(tmp_path / "none"), "--port", "0"]) == 2
    assert "config.json is missing: not a saved coderlm model" in capsys.readouterr().err
    assert main(["serve", "--model", "x", "--queue-size", "2", "--max-inputs", "4"]) == 2
    assert "--queue-size must be >= max_inputs (4)" in capsys.readouterr().err


def test_a_model_with_a_readout_is_served_with_it(model_dir, tmp_path):
    rlm = RegressionLM.load(model_dir)
    texts, _ = line_count_task(12, seed=3)
    rlm.fit_readout(texts, [2.0 * len(t) for t in texts], "chars2")
    served = ServedModel("m", rlm.save(tmp_path / "with_readout"), batch_size=8)
    assert served.objectives == [*rlm.objectives_[:-1], "chars2"]
    assert "chars2" in served.info()["objectives"]
    samples = served.sample(texts[:3], 4, seed=0)
    assert samples.shape == (3, 4, len(rlm.objectives_))
    np.testing.assert_allclose(samples, rlm.sample(texts[:3], 4, seed=0))
