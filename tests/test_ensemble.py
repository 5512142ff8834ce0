"""Several models pooled: samples side by side, through the API and the command line."""

import json

import numpy as np
import pytest

from coderlm import RegressionLM
from coderlm.cli import main
from coderlm.data.toy import line_count_task
from coderlm.ensemble import load_models, pooled_samples

TINY = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    texts, targets = line_count_task(30, seed=0)
    paths = {}
    for name, seed, objective in (("a", 0, "lines"), ("b", 1, "lines"), ("other", 0, "bytes")):
        rlm = RegressionLM(vocab_size=300, model=TINY, training={"steps": 3, "seed": seed, "progress": False})
        rlm.fit(texts, targets, objectives=[objective])
        rlm.save(root / name)
        paths[name] = root / name
    return paths


def test_pooled_samples_are_each_models_samples_side_by_side(saved):
    a, b = load_models([saved["a"], saved["b"]])
    texts, _ = line_count_task(5, seed=1)
    pooled = pooled_samples([a, b], texts, num_samples=4, seed=0)
    assert pooled.shape == (5, 8, 1)
    np.testing.assert_array_equal(pooled[:, :4], a.sample(texts, num_samples=4, seed=0))
    np.testing.assert_array_equal(pooled[:, 4:], b.sample(texts, num_samples=4, seed=0))
    with pytest.raises(ValueError, match="no model"):
        pooled_samples([], texts)


def test_cli_pools_repeated_models_and_refuses_different_objectives(saved, tmp_path, capsys):
    program = tmp_path / "prog.py"
    program.write_text("a = 1\nb = 2\n")
    models = ["--model", str(saved["a"]), "--model", str(saved["b"])]
    assert main(["predict", *models, str(program), "--all-samples", "--num-samples", "4"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert len(record["lines_samples"]) == 8 and record["lines"] == pytest.approx(np.median(record["lines_samples"]))

    test = tmp_path / "test.jsonl"
    texts, targets = line_count_task(12, seed=2)
    rows = [{"text": text, "targets": {"lines": float(y)}} for text, y in zip(texts, targets, strict=True)]
    test.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert main(["evaluate", *models, "--data", str(test), "--report", str(tmp_path / "r"), "--num-samples", "4"]) == 0
    assert "lines" in json.loads((tmp_path / "r" / "metrics.json").read_text())["all"]
    capsys.readouterr()

    assert main(["predict", "--model", str(saved["a"]), "--model", str(saved["other"]), str(program)]) == 2
    assert "pooled models must predict the same objectives" in capsys.readouterr().err
