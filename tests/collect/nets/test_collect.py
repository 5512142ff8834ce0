import json

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from coderlm.cli import main
from coderlm.collect.nets.collect import collect_nas, done_cells, sample_cells
from coderlm.collect.nets.nb201 import build_network
from coderlm.collect.nets.onnx_export import export_onnx, save_onnx
from coderlm.data import read_dataset
from coderlm.options import OptionError


def test_collect_resume_and_join(tmp_path):
    cells = sample_cells(3, seed=0)
    table = tmp_path / "nb201.csv"
    table.write_text(f"index,arch,c10_test_acc_200ep,lat_ms_pixel3\n7,{cells[0]},91.5,12\n8,{cells[1]},88,9\n")
    out = tmp_path / "data"
    first = collect_nas(out, 2, ["flops", "params", "latency_cpu"], cells_per_stage=1, join_csv=table, progress=False)
    assert (first.requested, first.already_done, first.collected) == (2, 0, 2)
    dataset = read_dataset(out / "nb201.jsonl")  # the project's dataset format
    rows = list(dataset)
    assert [r.meta["cell"] for r in rows] == cells[:2] and rows[0].group == cells[0]
    assert rows[0].targets["c10_test_acc_200ep"] == 91.5 and rows[1].targets["lat_ms_pixel3"] == 9
    assert rows[0].targets["flops"] > 0 and rows[0].targets["params"] > 0 and rows[0].targets["latency_cpu"] > 0
    assert rows[0].text.startswith("onnx opset=")

    # a kill mid-write leaves half a line: resume cuts it off and collects only what is missing
    with open(out / "nb201.jsonl", "a") as f:
        f.write('{"text": "half a ro')
    second = collect_nas(out, 3, ["flops"], cells_per_stage=1, progress=False)
    assert (second.already_done, second.collected) == (2, 1)
    assert done_cells(out / "nb201.jsonl") == set(cells)
    assert len(read_dataset(out / "nb201.jsonl")) == 3


def test_cli_collect_and_errors(tmp_path, capsys):
    out = tmp_path / "d.jsonl"
    args = ["collect", "nas", "--count", "1", "--cells-per-stage", "1", "--labels", "params", "--no-progress"]
    assert main([*args, "--out", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["collected"] == 1
    assert main([*args, "--out", str(out)]) == 0  # nothing left to do
    assert json.loads(capsys.readouterr().out) == {
        "dataset": str(out),
        "requested": 1,
        "already_done": 1,
        "collected": 0,
    }
    before = out.read_text()
    assert main([*args, "--cells-per-stage", "2", "--out", str(out)]) == 2  # other settings: no mixing
    assert "d.jsonl:1: collected with cells_per_stage=1, this run asks for 2" in capsys.readouterr().err
    row = json.loads(before)
    row["meta"].pop("builder")  # a row from the builder that pruned `none` edges
    out.write_text(json.dumps(row) + "\n")
    assert main([*args, "--out", str(out)]) == 2
    assert "d.jsonl:1: collected with builder=1, this run asks for 2" in capsys.readouterr().err
    out.write_text(before)
    assert main(["collect", "nas", "--out", str(out), "--labels", "speed"]) == 2
    assert "unknown label(s) ['speed']" in capsys.readouterr().err
    assert main(["collect", "nas", "--out", str(out), "--join", str(tmp_path / "missing.csv")]) == 2
    assert "missing.csv: no such file" in capsys.readouterr().err
    (tmp_path / "bad.jsonl").write_text('{"text": "x"}\n')
    assert main(["collect", "nas", "--out", str(tmp_path / "bad.jsonl")]) == 2
    assert "bad.jsonl:1: not a row written by the NAS collector" in capsys.readouterr().err


def test_bad_options_name_the_parameter(tmp_path):
    with pytest.raises(OptionError, match=r"^count must be in 1\.\.15625, got 0$"):
        sample_cells(0)
    with pytest.raises(OptionError, match=r"^workers must be >= 1, got 0$"):
        collect_nas(tmp_path, 1, workers=0, progress=False)
    assert not any(tmp_path.iterdir())  # refused before anything is written


def test_collect_exactly_the_given_cells(tmp_path, capsys):
    cells = sample_cells(40, seed=3)[-2:]
    listing = tmp_path / "cells.txt"
    listing.write_text(f"{cells[1]}\n\n{cells[0]}\n{cells[1]}\n")  # order kept, blanks and repeats ignored
    out = tmp_path / "d.jsonl"
    args = ["collect", "nas", "--cells-per-stage", "1", "--labels", "params", "--no-progress", "--out", str(out)]
    assert main([*args, "--cells", str(listing)]) == 0
    assert json.loads(capsys.readouterr().out)["collected"] == 2
    assert [row.meta["cell"] for row in read_dataset(out)] == [cells[1], cells[0]]

    listing.write_text(f"{cells[0]}\n|conv~0|+|none~0|none~1|+|none~0|none~1|none~2|\n")
    assert main([*args, "--cells", str(listing)]) == 2
    assert "|conv~0|" in capsys.readouterr().err
    assert main([*args, "--cells", str(tmp_path / "nope.txt")]) == 2
    assert "nope.txt: no such file (--cells)" in capsys.readouterr().err
    assert len(read_dataset(out)) == 2  # the bad listing collected nothing


def test_predict_reads_onnx_files_like_the_collector(tmp_path, capsys):
    """An .onnx file given to predict becomes the same text the collector wrote for training."""
    from coderlm.cli.predict import read_inputs

    out = tmp_path / "nas.jsonl"
    collect_nas(out, 6, ["params"], cells_per_stage=1, progress=False)
    row = next(iter(read_dataset(out)))
    model_file = tmp_path / "net.onnx"
    save_onnx(export_onnx(build_network(row.meta["cell"], cells_per_stage=1)), model_file)
    assert read_inputs([str(model_file)]) == [(str(model_file), row.text)]

    run = tmp_path / "run"
    tiny = ["--encoder-dim", "32", "--decoder-dim", "32", "--encoder-heads", "4", "--decoder-heads", "4",
            "--steps", "2", "--no-progress", "--pretokenize", "lines", "--max-input-len", "1024"]  # fmt: skip
    assert main(["train", "--data", str(out), "--out", str(run), *tiny]) == 0
    capsys.readouterr()
    from coderlm.estimator import RegressionLM

    assert RegressionLM.load(run).pretokenize == "lines"  # the flag reaches the estimator
    assert main(["predict", "--model", str(run), str(model_file), "--num-samples", "4"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["input"] == str(model_file) and record["params"] is not None

    (tmp_path / "junk.onnx").write_bytes(b"not a protobuf")
    assert main(["predict", "--model", str(run), str(tmp_path / "junk.onnx")]) == 2
    assert "junk.onnx: not a valid ONNX model" in capsys.readouterr().err
