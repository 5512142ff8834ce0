import json
import math

import numpy as np
import pytest
from matplotlib.axes import Axes

from coderlm.evaluation import evaluate, markdown_table, plots, regression_metrics, write_report

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def data():
    """Two tasks of 6 rows, 2 objectives (latency spans decades, accuracy does not), groups of 3."""
    rng = np.random.default_rng(0)
    measured = np.stack([10 ** rng.uniform(-1, 3, 12), rng.uniform(0.5, 0.9, 12)], axis=1)
    predicted = measured * rng.uniform(0.8, 1.25, (12, 2))
    predicted[0, 0] = np.nan
    measured[6:, 1] = 0.7  # task b: constant accuracy, so its correlations are undefined
    tasks = ["a"] * 6 + ["b"] * 6
    groups = ["g", "g", "g", "h", "h", "h"] * 2  # the same names in both tasks
    intervals = {0.9: np.stack([measured * 0.9, measured * 1.1], axis=-1), 0.5: np.stack([predicted, predicted], -1)}
    return predicted, measured, tasks, groups, intervals


def test_evaluate_structure_and_values(data):
    predicted, measured, tasks, groups, intervals = data
    out = evaluate(predicted, measured, ["latency", "accuracy"], tasks, groups, intervals)
    assert list(out) == ["a", "b", "all"]
    assert list(out["a"]) == ["latency", "accuracy"]
    json.dumps(out, allow_nan=False)
    latency = out["all"]["latency"]
    expected = regression_metrics(predicted[:, 0], measured[:, 0])
    assert latency["n"] == 11 and latency["spearman"] == pytest.approx(expected["spearman"])
    assert latency["coverage_90"] == 1.0 and latency["coverage_50"] == 0.0
    assert out["a"]["latency"]["n"] == 5
    assert out["b"]["accuracy"]["spearman"] is None and out["b"]["accuracy"]["group_spearman"]["mean"] is None
    assert out["all"]["latency"]["group_spearman"]["groups"] == 4  # groups never merge across tasks
    assert out["all"]["latency"]["best_of_group"]["groups"] == 4
    assert out["all"]["latency"]["best_of_group"]["lower_is_better"] is True
    assert out["all"]["accuracy"]["best_of_group"]["lower_is_better"] is False  # guessed from the name


def test_evaluate_task_keys_and_options(data):
    predicted, measured, *_ = data
    assert list(evaluate(predicted, measured, ["x", "y"])) == ["all"]
    one = evaluate(predicted[:, :1], measured[:, :1], ["x"], tasks=["t"] * 12)
    assert list(one) == ["t"] and "group_spearman" not in one["t"]["x"]
    flat = evaluate(predicted[:, 0], measured[:, 0], ["x"], groups=["g"] * 12, lower_is_better={"x": False})
    assert flat["all"]["x"]["best_of_group"]["lower_is_better"] is False


def test_evaluate_names_bad_inputs(data):
    predicted, measured, tasks, *_ = data
    with pytest.raises(ValueError, match="measured must have shape"):
        evaluate(predicted, measured[:5], ["x", "y"])
    with pytest.raises(ValueError, match="predicted must have shape"):
        evaluate(predicted, measured, ["x"])
    with pytest.raises(ValueError, match="tasks must hold one label per row"):
        evaluate(predicted, measured, ["x", "y"], tasks=tasks[:3])
    with pytest.raises(ValueError, match="may not be called 'all'"):
        evaluate(predicted, measured, ["x", "y"], tasks=["all"] * 6 + ["b"] * 6)
    with pytest.raises(ValueError, match=r"intervals\[0.9\] must have shape"):
        evaluate(predicted, measured, ["x", "y"], intervals={0.9: np.zeros((12, 2))})
    with pytest.raises(ValueError, match="one flag per objective"):
        evaluate(predicted, measured, ["x", "y"], lower_is_better=[True])
    with pytest.raises(ValueError, match="unknown objectives"):
        evaluate(predicted, measured, ["x", "y"], lower_is_better={"z": True})


def test_markdown_table():
    rows = [{"name": "a|b", "score": 0.12345, "n": 3}, {"name": "c", "score": float("nan"), "tiny": 1.5e-5}]
    assert markdown_table(rows) == (
        "| name | score | n | tiny |\n| --- | --- | --- | --- |\n| a\\|b | 0.123 | 3 | - |\n| c | - | - | 1.5e-05 |\n"
    )
    assert markdown_table(rows, columns=["score"], floatfmt=".1f") == "| score |\n| --- |\n| 0.1 |\n| - |\n"
    assert markdown_table([{"big": 2.5e9, "none": None, "flag": True}]).splitlines()[-1] == "| 2.5e+09 | - | True |"
    assert markdown_table([]) == ""


def test_log_scale_choice(tmp_path, monkeypatch):
    assert plots.log_scale([1, 2], [150, np.nan])
    assert not plots.log_scale([1, 2], [50])
    assert not plots.log_scale([-1, 2], [500])
    scales = []
    monkeypatch.setattr(Axes, "set_xscale", lambda self, value, **kw: scales.append(value))
    plots.scatter([1, 1000], [2, 900], tmp_path / "wide.png", "wide")
    assert scales == ["log"]
    plots.scatter([1, 10], [2, 9], tmp_path / "narrow.png", "narrow")
    assert scales == ["log"]
    for name in ("wide.png", "narrow.png"):
        assert (tmp_path / name).read_bytes().startswith(PNG)


def test_plots_handle_edge_cases(tmp_path):
    assert plots.scatter([np.nan], [1], tmp_path / "empty.png", "empty").read_bytes().startswith(PNG)
    assert plots.group_histogram([], tmp_path / "h.png", "none").read_bytes().startswith(PNG)
    with pytest.raises(ValueError, match="labels must hold one label per row"):
        plots.scatter([1, 2], [1, 2], tmp_path / "x.png", "x", labels=["a"])


def test_write_report(tmp_path, data):
    predicted, measured, tasks, groups, intervals = data
    objectives = ["latency (ms)", "accuracy"]
    metrics = evaluate(predicted, measured, objectives, tasks, groups, intervals)
    baselines = [{"model": "kNN", "spearman": 0.5}, {"model": "GBDT", "spearman": float("nan")}]
    out = tmp_path / "run" / "eval"
    path = write_report(
        out, metrics, predicted, measured, objectives, tasks, title="toy", extra_tables=[("Baselines", baselines)]
    )
    assert path == out / "report.md"
    assert json.loads((out / "metrics.json").read_text()) == metrics
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert pngs == [
        "groups_accuracy.png",
        "groups_latency__ms_.png",
        "scatter_accuracy.png",
        "scatter_latency__ms_.png",
    ]
    assert all((out / name).read_bytes().startswith(PNG) for name in pngs)
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary files left
    report = path.read_text()
    assert report.startswith("# toy\n")
    for text in (
        "## a",
        "## b",
        "## all",
        "## Baselines",
        "| kNN | 0.500 |",
        "| GBDT | - |",
        "coverage 50",
        "coverage 90",
        "group spearman",
        "pairwise acc",
        "(scatter_latency__ms_.png)",
    ):
        assert text in report
    header = next(line for line in report.splitlines() if line.startswith("| objective"))
    assert header.split(" | ")[:7] == ["| objective", "n", "spearman", "kendall", "pearson", "MAE", "MAPE"]


def test_write_report_accepts_raw_nan(tmp_path):
    metrics = {"all": {"x": {"spearman": math.nan, "n": 2}}}
    write_report(tmp_path, metrics, [1.0, 2.0], [1.0, 2.0], ["x"])
    assert json.loads((tmp_path / "metrics.json").read_text())["all"]["x"]["spearman"] is None


def test_write_report_keeps_figures_of_similar_names_apart(tmp_path):
    values = np.array([[1.0, 2.0], [2.0, 3.0]])
    write_report(tmp_path, {}, values, values, ["a b", "a_b"])
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["scatter_a_b.png", "scatter_a_b_1.png"]
