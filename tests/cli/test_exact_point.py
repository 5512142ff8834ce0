"""The exact median (``point="exact"``): through the estimator, ``coderlm predict`` and ``coderlm evaluate``."""

import json

import numpy as np
import pytest

from coderlm import RegressionLM
from coderlm.cli import main
from coderlm.data.toy import line_count_task
from tests.cli.test_calibrate import TINY, write


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exact")
    texts, targets = line_count_task(60, seed=0)
    rlm = RegressionLM(vocab_size=300, model=TINY, num_samples=16, training={"steps": 60, "progress": False})
    rlm.fit(texts[:40], targets[:40], objectives=["lines"]).save(folder / "model")
    return folder, rlm, texts[40:], targets[40:]


def test_the_exact_median_is_the_many_sample_median(saved):
    """Deterministic, and where 4,096 samples' CDF reaches one half; exact quantiles rise with the level
    and a readout follows its inputs."""
    _, rlm, texts, targets = saved
    exact = rlm.predict(texts, point="exact")
    np.testing.assert_array_equal(exact, rlm.predict(texts, point="exact"))
    samples = rlm.sample(texts, num_samples=4096, seed=3)
    below = (samples <= exact[:, None, :]).mean(1)
    assert np.all(np.abs(below - 0.5) < 0.04), below.ravel()
    levels = rlm.predict_quantiles(texts, [0.1, 0.5, 0.9], exact=True)
    assert levels.shape == (len(texts), 1, 3) and np.all(np.diff(levels, axis=-1) >= 0)
    np.testing.assert_allclose(levels[..., 1], exact, rtol=1e-5)  # three levels batched: float32 noise
    rlm.fit_readout(texts, 2 * np.asarray(targets, dtype=float) + 1, "doubled")
    both = rlm.predict(texts, point="exact")
    assert both.shape == (len(texts), 2)
    readout = rlm.readouts_[0]
    np.testing.assert_allclose(both[:, 1], readout.apply(both[:, :1]))
    rlm.readouts_.clear()


def test_predict_and_evaluate_take_the_exact_point(saved, capsys):
    folder, _, texts, targets = saved
    test = write(folder / "test.jsonl", texts, targets)
    model = str(folder / "model")
    assert main(["predict", "--model", model, "--point", "exact", "--no-progress", str(test)]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    exact = RegressionLM.load(model).predict(texts, point="exact")[:, 0]
    np.testing.assert_allclose([r["lines"] for r in records], exact)
    assert all(r["lines_lower"] <= r["lines_upper"] for r in records)

    report = folder / "report"
    assert main(["evaluate", "--model", model, "--data", str(test), "--report", str(report), "--point", "exact",
                 "--no-progress"]) == 0  # fmt: skip
    assert "spearman" in json.loads((report / "metrics.json").read_text())["all"]["lines"]
    assert "| rlm (exact median) |" in capsys.readouterr().out

    # two models pool samples: no one distribution to walk
    assert main(["predict", "--model", model, "--model", model, "--point", "exact", str(test)]) != 0
    assert "one model's distribution" in capsys.readouterr().err
