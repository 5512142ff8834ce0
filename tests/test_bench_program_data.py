"""The programs bench's data helpers (bench/program_data.py): another collection's rows join the training
rows only, and the split of the bench's own rows does not move."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from program_data import extra_training, load, split, with_extra


def write(path: Path, corpus: str, n: int, label: str | None) -> Path:
    rows = []
    for i in range(n):
        meta = {"memory_label": label} if label else {}
        name = label or "peak_memory_bytes"
        targets = {name: 100.0 * (i + 1), "runtime_s": 1e-5 * (i + 1)}
        rows.append({"text": f"{corpus} {i}", "targets": targets, "task": "python", "group": f"p/{i}", "meta": meta})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def collections(tmp_path):
    own = load(write(tmp_path / "mbxp.jsonl", "mbxp", 40, None), ["python"])
    more = load(write(tmp_path / "leetcode.jsonl", "leetcode", 15, "heap_peak_bytes"), ["python"])
    return own, more


def test_extra_rows_are_appended_after_the_own_rows(collections):
    own, more = collections
    data = with_extra(own, {"leetcode": more})
    assert data["texts"][:40] == own["texts"] and data["texts"][40:] == more["texts"]
    np.testing.assert_array_equal(data["extra_rows"], np.arange(40, 55))
    np.testing.assert_array_equal(data["targets"][40:], more["targets"])  # each row's own memory label
    assert data["targets"].shape == (55, 2) and data["reruns"].shape == (55, 2)
    assert data["groups"][40] == "leetcode:p/0" and data["groups"][0] == "p/0"
    assert data["tasks"] == ["python"] * 55


def test_the_split_of_the_own_rows_is_the_same_with_or_without_extras(collections):
    own, more = collections
    data = with_extra(own, {"leetcode": more})
    alone = split(own, "problem")
    assert max(max(alone[k]) for k in alone) < 40  # the split indexes the own rows, which keep their places
    assert not set(alone["test"]) & set(alone["train"]) and not set(alone["val"]) & set(alone["train"])
    assert [data["texts"][i] for i in alone["test"]] == [own["texts"][i] for i in alone["test"]]


def test_extra_rows_of_held_out_problems_and_repeats_of_training_rows_are_left_out(tmp_path, capsys):
    own = load(write(tmp_path / "leetcode.jsonl", "leetcode", 40, "heap_peak_bytes"), ["python"])
    parts = split(own, "problem")
    held = np.concatenate([parts["val"], parts["test"]])
    trained, tested = own["groups"][parts["train"][0]], own["groups"][parts["test"][0]]
    rows = [
        (trained, own["texts"][parts["train"][0]].removeprefix("language: python\n")),  # a training row again
        (trained, "the same problem on one case"),  # a training problem's single-case row: kept
        (tested, "a test problem on one case"),  # would show the test program: left out
        ("p/99", "a problem the own collection lacks"),  # kept
    ]
    path = tmp_path / "leetcode.cases.jsonl"
    targets = {"heap_peak_bytes": 1.0, "runtime_s": 1.0}
    meta = {"memory_label": "heap_peak_bytes"}
    path.write_text(
        "".join(
            json.dumps({"text": t, "targets": targets, "task": "python", "group": g, "meta": meta}) + "\n"
            for g, t in rows
        )
    )
    data = with_extra(own, {"leetcode.cases": load(path, ["python"])})
    kept = extra_training(data, parts["train"], held)
    assert [data["texts"][i].split("\n", 1)[1] for i in kept] == [rows[1][1], rows[3][1]]
    assert "2 of 4 left out" in capsys.readouterr().out
    assert len(extra_training(with_extra(own, {}), parts["train"], held)) == 0


def test_no_extras_changes_nothing(collections):
    own, _ = collections
    data = with_extra(own, {})
    assert data["texts"] == own["texts"] and len(data["extra_rows"]) == 0
    np.testing.assert_array_equal(data["targets"], own["targets"])


def test_an_encoders_entry_names_its_family(tmp_path):
    from encoder_families import encoder_family, family_options

    bert, rlm = tmp_path / "bert", tmp_path / "rlm"
    bert.mkdir(), rlm.mkdir()
    (bert / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (rlm / "config.json").write_text(json.dumps({"kind": "RegressionLM"}))
    assert encoder_family("scratch") == ("scratch", None)
    assert encoder_family(str(bert)) == ("pretrained", str(bert))
    assert encoder_family(f"frozen:{bert}") == ("frozen", str(bert))
    assert encoder_family(str(rlm)) == ("model", str(rlm))  # a trained RLM: fine-tuned whole
    kind, folder = encoder_family("untrained:builtin:python-encoder")  # shipped folders by name
    assert kind == "untrained" and folder.endswith("python-encoder") and Path(folder, "config.json").is_file()
    assert encoder_family("builtin:nb201")[0] == "model"
    assert family_options("model", str(rlm), {"dropout": 0.1}, 128, 3e-4) == ({"dropout": 0.1}, {"learning_rate": 3e-4})


def test_an_encoders_entry_naming_no_folder_stops_before_any_work(tmp_path):
    from encoder_families import encoder_family

    for spec in ["''", str(tmp_path / "missing")]:  # a shell's quotes passed on literally; a typo
        with pytest.raises(SystemExit, match="neither scratch"):
            encoder_family(spec)
