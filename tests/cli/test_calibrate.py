"""coderlm calibrate: conformal scores kept with the model, used by predict and reported by evaluate."""

import json

import numpy as np

from coderlm import RegressionLM
from coderlm.cli import main
from coderlm.data.toy import line_count_task
from coderlm.decoding import central_interval

TINY = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}


def write(path, texts, targets):
    with open(path, "w") as f:
        for text, target in zip(texts, targets, strict=True):
            f.write(json.dumps({"text": text, "targets": {"lines": target}}) + "\n")
    return path


def test_calibrate_predict_evaluate(tmp_path, capsys):
    texts, targets = line_count_task(80, seed=0)
    rlm = RegressionLM(vocab_size=300, model=TINY, num_samples=16, training={"steps": 60, "progress": False})
    rlm.fit(texts[:40], targets[:40], objectives=["lines"]).save(tmp_path / "model")
    small = write(tmp_path / "small.jsonl", texts[40:45], targets[40:45])
    cal = write(tmp_path / "cal.jsonl", texts[40:70], targets[40:70])
    test = write(tmp_path / "test.jsonl", texts[70:], targets[70:])

    assert main(["calibrate", "--model", str(tmp_path / "model"), "--data", str(small)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (
        summary["rows"] == 5 and summary["promised"] == [0.5, 0.8] and "cannot promise 90%, 95%" in summary["warning"]
    )

    assert main(["calibrate", "--model", str(tmp_path / "model"), "--data", str(cal)]) == 0
    assert json.loads(capsys.readouterr().out)["promised"] == [0.5, 0.8, 0.9, 0.95]
    loaded = RegressionLM.load(tmp_path / "model")
    samples = loaded.sample(texts[70:], seed=1)
    raw, wide = central_interval(samples, 0.9), loaded.calibration_.interval(samples, 0.9)
    q = loaded.calibration_.correction(0.9, 0)  # one margin for every input (shrinks an over-wide model's)
    shift = (np.log(raw / wide) * [1, -1]) if loaded.calibration_.log[0] else (raw - wide) * [1, -1]
    float32 = np.finfo(np.float32).eps * np.abs(raw).max() * 4  # the samples' own rounding, on this scale
    np.testing.assert_allclose(shift, q, rtol=1e-4, atol=float32)
    assert loaded.predict_interval(texts[70:], 0.9).shape == (10, 1, 2)

    assert main(["predict", "--model", str(tmp_path / "model"), str(test)]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert all(r["calibrated"] for r in records)
    report = tmp_path / "report"
    assert main(["evaluate", "--model", str(tmp_path / "model"), "--data", str(test), "--report", str(report),
                 "--no-progress"]) == 0  # fmt: skip
    entry = json.loads((report / "metrics.json").read_text())["all"]["lines"]
    assert {"coverage_90", "coverage_90_calibrated", "width_90", "width_90_calibrated"} <= set(entry)
    assert entry["width_90"] > 0 and entry["width_90_calibrated"] > 0

    rlm.fit(texts[:40], targets[:40], objectives=["lines"]).save(tmp_path / "model")  # a new model: calibration gone
    assert not (tmp_path / "model" / "calibration.json").exists()
