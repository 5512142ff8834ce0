import json

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from coderlm.cli import main
from coderlm.data import read_dataset

TINY = ["--from-scratch", "--count", "12", "--steps", "4", "--model-dim", "16", "--vocab-size", "300",
        "--num-samples", "4", "--baselines", "length,knn"]  # fmt: skip


@pytest.mark.slow
def test_quickstart_from_scratch_runs_every_stage_and_resumes(tmp_path, capsys):
    out = tmp_path / "qs"
    assert main(["quickstart", "--out", str(out), *TINY]) == 0
    printed = capsys.readouterr().out
    for stage in ("[1/5] collect 12", "[2/5] split", "[3/5] train", "[4/5] evaluate", "[5/5] predict"):
        assert stage in printed
    table = [line for line in printed.splitlines() if line.startswith("|")]
    assert "latency_cpu spearman" in table[0] and "flops spearman" in table[0]
    assert [line.split("|")[1].strip() for line in table[2:]] == ["rlm", "length", "knn"]

    rows = list(read_dataset(out / "data" / "nb201.jsonl"))
    assert len(rows) == 12 and all({"latency_cpu", "flops", "params"} <= set(r.targets) for r in rows)
    test_cells = {r.group for r in read_dataset(out / "data" / "test.jsonl")}
    assert test_cells and not test_cells & {r.group for r in read_dataset(out / "data" / "train.jsonl")}
    assert (out / "report" / "report.md").is_file() and (out / "model" / "config.json").is_file()

    summary = json.loads((out / "quickstart.json").read_text())
    example = summary["example"]
    assert example["cell"] not in {r.group for r in rows}  # an architecture never collected
    assert example["input"] == str(out / "example.onnx") and (out / "example.onnx").is_file()
    for name in ("latency_cpu", "flops"):
        assert example[f"{name}_lower"] <= example[name] <= example[f"{name}_upper"]
        assert example[f"{name}_measured"] > 0

    # a rerun finds every network collected and the training finished
    assert main(["quickstart", "--out", str(out), *TINY, "--baselines", ""]) == 0
    assert len(read_dataset(out / "data" / "nb201.jsonl")) == 12
    assert json.loads((out / "quickstart.json").read_text())["example"]["cell"] == example["cell"]


def test_quickstart_rejects_bad_options_before_any_work(tmp_path, capsys):
    out = tmp_path / "qs"
    assert main(["quickstart", "--out", str(out), "--count", "3", "--steps", "-1"]) == 2
    assert "--count must be >= 10, --steps must be >= 0" in capsys.readouterr().err
    assert main(["quickstart", "--out", str(out), "--baselines", "gbdt,oracle"]) == 2
    assert "--baselines: unknown ['oracle']" in capsys.readouterr().err
    assert not out.exists()
