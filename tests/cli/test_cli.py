"""End to end through the command line: split -> train -> kill -> resume -> predict -> evaluate."""

import csv
import io
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from coderlm.builtin import model_folder
from coderlm.cli import main

TINY = ["--encoder-dim", "32", "--decoder-dim", "32", "--encoder-heads", "4", "--decoder-heads", "4",
        "--vocab-size", "300", "--max-input-len", "96", "--no-progress"]  # fmt: skip


def write_rows(path: Path, n: int = 48, seed: int = 0) -> Path:
    """Programs of 1-8 lines; targets: lines, and bytes (missing for every 7th row)."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        for i in range(n):
            text = "".join(f"v{rng.randint(0, 9)} = {rng.randint(0, 999)}\n" for _ in range(rng.randint(1, 8)))
            targets = {"lines": text.count("\n"), "bytes": None if i % 7 == 0 else len(text)}
            f.write(json.dumps({"text": text, "targets": targets, "group": f"p{i // 3}"}) + "\n")
    return path


def coderlm(*args: str, env: dict | None = None, kill_after: int | None = None) -> subprocess.CompletedProcess:
    """The command line in a subprocess; ``kill_after``: SIGKILLed after that training step (tests/faults.py)."""
    launch = ["coderlm.cli"] if kill_after is None else ["tests.faults", str(kill_after)]
    single = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # bit-equal runs even on a busy machine
    return subprocess.run(
        [sys.executable, "-m", *launch, *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],  # the repository: tests.faults is importable
        env={**os.environ, **single, **(env or {})},
    )


def test_split_train_resume_predict_evaluate(tmp_path, capsys):
    data = write_rows(tmp_path / "all.jsonl")
    assert main(["split", "--data", str(data), "--out", str(tmp_path / "split"), "--by-group"]) == 0
    train, val, test = (tmp_path / "split" / f"{name}.jsonl" for name in ("train", "val", "test"))
    run = tmp_path / "run"
    common = ["--data", str(train), "--val", str(val), "--out", str(run), "--missing", "mask",
              "--steps", "40", "--checkpoint-every", "5", "--log-every", "1", "--eval-every", "10", *TINY]  # fmt: skip

    # start training, killed (SIGKILL, no clean-up) after step 12; then resume
    killed = coderlm("train", *common, kill_after=12)
    assert killed.returncode == -signal.SIGKILL
    assert (run / "checkpoints" / "latest").read_text().strip() == "step-0000010"
    assert not (run / "model.safetensors").exists()  # the final model is written only at the end
    resumed = coderlm("train", *common, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout.strip().splitlines()[-1])
    assert summary["steps"] == 40 and summary["objectives"] == ["bytes", "lines"]

    # the resumed run's loss curve equals an uninterrupted run's
    straight = tmp_path / "straight"  # a subprocess too: same threads, same arithmetic
    assert coderlm("train", *common[:4], "--out", str(straight), *common[6:]).returncode == 0
    curve = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    reference = [json.loads(line) for line in (straight / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in curve] == list(range(1, 41))
    assert [r["loss"] for r in curve] == [r["loss"] for r in reference]
    capsys.readouterr()

    # predict: files, a dataset and stdin; JSON and CSV
    program = tmp_path / "prog.py"
    program.write_text("a = 1\nb = 2\nc = 3\n")
    assert main(["predict", "--model", str(run), str(program), str(test), "--all-samples", "--num-samples", "8"]) == 0
    out, err = capsys.readouterr()
    records = [json.loads(line) for line in out.splitlines()]
    assert records[0]["input"] == str(program) and len(records) == 1 + len(test.read_text().splitlines())
    assert f"{len(records)}/{len(records)}" in err  # the sampling bar on stderr counts the inputs
    assert records[0]["lines_lower"] <= records[0]["lines"] <= records[0]["lines_upper"]
    assert len(records[0]["bytes_samples"]) == 8
    assert main(["predict", "--model", str(run), str(program), str(test), "--num-samples", "8", "--no-progress"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["predict", "--model", str(run), str(program), "--output", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["input"] == str(program) and float(rows[0]["lines"]) > 0

    # evaluate with a baseline beside the model
    report = tmp_path / "report"
    code = main(["evaluate", "--model", str(run), "--data", str(test), "--report", str(report),
                 "--baselines", "length", "--train-data", str(train), "--num-samples", "16"])  # fmt: skip
    assert code == 0
    metrics = json.loads((report / "metrics.json").read_text())
    assert "lines" in metrics["all"] and "spearman" in metrics["all"]["lines"]
    assert (report / "report.md").read_text().count("length") >= 1
    assert json.loads((report / "comparison.json").read_text()).keys() == {"rlm", "length"}


def test_yaml_config_holds_the_same_fields(tmp_path, capsys):
    data = write_rows(tmp_path / "d.jsonl", n=20)
    config = tmp_path / "cfg.yaml"
    config.write_text(
        f"data: {data}\nout: {tmp_path / 'run'}\nobjectives: [lines]\n"
        "model: {encoder_dim: 32, decoder_dim: 32, encoder_heads: 4, decoder_heads: 4}\n"
        "training: {steps: 3, progress: false}\nvocab_size: 300\n"
    )
    assert main(["train", "--config", str(config), "--steps", "4"]) == 0  # a flag wins over the file
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["steps"] == 4 and summary["objectives"] == ["lines"]
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["model"]["encoder_dim"] == 32


def test_train_by_default_learns_nan_where_a_task_lacks_an_objective(tmp_path, capsys):
    """A multi-task file (each task its own objective): the default --missing auto keeps every row; a row
    missing its own task's value is skipped; --missing skip would leave nothing."""
    data = tmp_path / "tasks.jsonl"
    with open(data, "w") as f:
        for i in range(24):
            text = "".join(f"v{j} = {j * i}\n" for j in range(1 + i % 5))
            value = None if i == 4 else text.count("\n")
            targets = {"lines": value} if i % 2 == 0 else {"bytes": len(text)}
            f.write(json.dumps({"text": text, "targets": targets, "task": ["lines", "bytes"][i % 2]}) + "\n")
    run = tmp_path / "run"
    assert main(["train", "--data", str(data), "--out", str(run), "--steps", "2", *TINY]) == 0
    capsys.readouterr()
    summary = json.loads((run / "train_summary.json").read_text())
    assert summary["missing"] == "auto" and summary["missing_applied"] == "special" and summary["skipped"] == 1
    assert summary["fit_report"]["examples"] == 23
    assert main(["train", "--data", str(data), "--out", str(tmp_path / "r2"), "--missing", "skip", *TINY]) == 2
    assert "no rows left for training after skipping 24" in capsys.readouterr().err


BAD_ROWS = [
    ('{"text": "a", "targets": {"y": 1}}\n{"text": "b", "targets": {"y": 2}\n', r"bad\.jsonl:2: .*JSON"),
    ('{"targets": {"y": 1}}\n', r"bad\.jsonl:1: field 'text'"),
    ('{"text": 5, "targets": {"y": 1}}\n', r"bad\.jsonl:1: field 'text'"),
    ('{"text": "a", "targets": {"y": "fast"}}\n', r"bad\.jsonl:1: field 'targets"),
    ("", r"bad\.jsonl: .*(empty|no examples)"),
]


@pytest.mark.parametrize("content, message", BAD_ROWS)
def test_bad_dataset_is_one_line_exit_2_nothing_written(tmp_path, content, message):
    import re

    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    out = coderlm("train", "--data", str(bad), "--out", str(tmp_path / "run"), *TINY)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("coderlm: error: "), out.stderr
    assert re.search(message, lines[0]), lines[0]
    assert not (tmp_path / "run").exists()


def test_unknown_target_and_options_are_clear_errors(tmp_path, capsys):
    data = write_rows(tmp_path / "d.jsonl", n=10)
    assert main(["train", "--data", str(data), "--out", str(tmp_path / "r"), "--objectives", "speed", *TINY]) == 2
    assert "speed" in capsys.readouterr().err
    config = tmp_path / "cfg.yaml"
    config.write_text("training: {epochs: 3}\n")
    assert main(["train", "--config", str(config), "--data", str(data), "--out", str(tmp_path / "r")]) == 2
    assert "unknown option 'training.epochs'" in capsys.readouterr().err
    assert main(["train", "--data", str(data), *TINY]) == 2
    assert "--out is required" in capsys.readouterr().err
    assert main(["predict", "--model", str(tmp_path / "nope"), str(data)]) == 2
    assert "config.json is missing" in capsys.readouterr().err
    frozen = ["--encoder", str(model_folder("builtin:python-encoder")), "--number-values"]  # a boolean flag's error
    assert main(["train", "--data", str(data), "--out", str(tmp_path / "r"), *frozen, *TINY]) == 2
    assert "--number-values needs an encoder that trains" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "command",
    ["train", "pretrain", "readout", "predict", "evaluate", "calibrate", "split", "collect", "quickstart", "profile",
     "serve"],
)  # fmt: skip
def test_help_documents_every_subcommand(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0 and out.startswith(f"usage: coderlm {command}")
    if command == "train":  # dataclass fields' comments become the flags' help
        assert "gradient clipping at this global norm" in out and "encoder width" in out
    if command == "quickstart":  # a help text with a percent sign ("90% needs 9") is shown, not formatted
        assert "90% needs 9" in out


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "coderlm"
    out = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "train" in out.stdout
