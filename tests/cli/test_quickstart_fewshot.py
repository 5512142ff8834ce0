"""The main job: this CPU as a new device, from a few measurements, with a (tiny) shipped model."""

import json

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import coderlm.builtin
from coderlm import RegressionLM
from coderlm.cli import main
from coderlm.collect.nets.collect import sample_cells
from coderlm.collect.nets.nb201_onnx import build_onnx
from coderlm.collect.nets.onnx_text import onnx_to_text
from coderlm.data import read_dataset

TINY = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A stand-in for builtin:nb201: accuracy and two source latencies from 5-cell ONNX text (exact targets,
    as builtin:nb201 was trained)."""
    cells = sample_cells(24, seed=7)
    texts = [onnx_to_text(build_onnx(cell, 5)) for cell in cells]
    convs = np.array([cell.count("conv") for cell in cells], dtype=float)
    targets = np.stack([90 - convs, 1 + convs, 2 + 0.5 * convs], axis=1)
    rlm = RegressionLM(vocab_size=600, pretokenize="lines", max_input_len=256, model=TINY, num_samples=8,
                       training={"steps": 20, "progress": False, "target_noise": 0.0})  # fmt: skip
    rlm.fit(texts, targets, objectives=["c10_test_acc_200ep", "lat_ms_a", "lat_ms_b"])
    monkeypatch.setattr(coderlm.builtin, "HERE", tmp_path / "builtin")
    rlm.save(tmp_path / "builtin" / "nb201")
    return rlm


@pytest.mark.slow
def test_fewshot_quickstart_measures_finetunes_calibrates_and_compares(shipped, tmp_path, capsys):
    out = tmp_path / "qs"
    args = ["quickstart", "--out", str(out), "--shots", "4", "--calibration", "9", "--networks", "5", "--finetune",
            "--steps", "3", "--num-samples", "8"]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    for stage in ("[1/5] measure 18", "[2/5] read this CPU's latency out of builtin:nb201", "[3/5] calibrate", "[4/5]",
                  "[5/5]"):  # fmt: skip
        assert stage in printed
    table = [line for line in printed.splitlines() if line.startswith("|")]
    methods = [line.split("|")[1].strip() for line in table[2:]]
    assert methods[:3] == ["rlm (readout)", "rlm (fine-tuned)", "gbdt (same shots)"]
    assert methods[3].startswith("zero-shot (")
    rows = list(read_dataset(out / "data" / "nb201.jsonl"))
    assert len(rows) == 18 and all(r.targets["latency_cpu"] > 0 for r in rows)
    assert {p: len(read_dataset(out / "data" / f"{p}.jsonl")) for p in ("shots", "calibration", "test")} == {
        "shots": 4,
        "calibration": 9,
        "test": 5,
    }
    summary = json.loads((out / "quickstart.json").read_text())
    assert summary["level"] == 0.9 and 0 <= summary["coverage_calibrated"] <= 1
    assert (out / "model" / "calibration.json").is_file() and (out / "report" / "report.md").is_file()
    # the model: the shipped one with this CPU's latency read out of its source devices' (ridge on a and b)
    assert RegressionLM.load(out / "model").objectives_ == [*shipped.objectives_, "latency_cpu"]
    assert "ridge on " in printed and RegressionLM.load(out / "model").readouts_[0].inputs == [1, 2]
    assert RegressionLM.load(out / "finetuned").objectives_ == [*shipped.objectives_, "latency_cpu"]
    assert main(args) == 0  # a rerun resumes: nothing measured twice
    assert len(read_dataset(out / "data" / "nb201.jsonl")) == 18


def test_a_missing_shipped_model_is_a_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(coderlm.builtin, "HERE", tmp_path / "empty")
    (tmp_path / "empty").mkdir()
    assert main(["quickstart", "--out", str(tmp_path / "qs")]) == 2
    assert "builtin:nb201: no such built-in model" in capsys.readouterr().err
    assert not (tmp_path / "qs").exists()


def test_by_default_the_shots_calibrate_the_readout_each_left_out(shipped, tmp_path, capsys):
    out = tmp_path / "qs"
    assert main(["quickstart", "--out", str(out), "--shots", "9", "--networks", "5", "--num-samples", "8"]) == 0
    printed = capsys.readouterr().out
    assert "[1/5] measure 14" in printed and "calibrate its intervals on the 9, each read out without it" in printed
    assert not (out / "data" / "calibration.jsonl").exists()
    calibration = json.loads((out / "model" / "calibration.json").read_text())
    assert calibration["kind"] == "cross-conformal" and calibration["size"] == 9
    assert json.loads((out / "quickstart.json").read_text())["level"] == 0.9  # 9 rows promise 90%
    assert main(["quickstart", "--out", str(tmp_path / "few"), "--shots", "3"]) == 2
    assert "--shots must be >= 4 (calibrated on the shots; or give --calibration)" in capsys.readouterr().err
