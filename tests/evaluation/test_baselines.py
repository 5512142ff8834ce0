import math

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr
from threadpoolctl import threadpool_limits

from coderlm.data.toy import line_count_task
from coderlm.evaluation.baselines import (
    BASELINES,
    NgramFeaturizer,
    RegressionHeadRegressor,
    TextLength,
    baseline_names,
    make_baseline,
    use_log_target,
)
from coderlm.evaluation.baselines.base import from_fit_space, log_scale, to_fit_space

TINY = {"encoder_dim": 32, "encoder_heads": 2, "encoder_layers": 1}
HEAD = {
    "vocab_size": 300,
    "max_input_len": 128,
    "model": TINY,
    "training": {"steps": 60, "batch_size": 32, "learning_rate": 3e-3, "progress": False},
}
FAST = {
    "regression_head_norm": HEAD,
    "regression_head_raw": HEAD,
    "regression_head_log": HEAD,
    "gbdt": {"max_iter": 60, "n_threads": 1},
    "knn": {},
    "length": {},
}


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """One thread each for torch and OpenMP: on a busy 2-core machine, spinning threads cost 10x."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    with threadpool_limits(1, user_api="openmp"):
        yield
    torch.set_num_threads(before)


def rho(predicted: np.ndarray, measured) -> float:
    return spearmanr(predicted, measured).statistic


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_fit_returns_self_and_predicts_float64(name):
    texts, targets = line_count_task(60, seed=0)
    model = make_baseline(name, **FAST[name])
    assert model.fit(texts, np.array(targets)) is model
    out = model.predict(texts[:7])
    assert out.shape == (7, 1) and out.dtype == np.float64 and np.isfinite(out).all()
    assert model.fit(texts, [[t] for t in targets]).predict(texts[:3]).shape == (3, 1)  # (n, 1) targets too


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gbdt", "knn", "length", "regression_head_norm"])
def test_baselines_rank_held_out_texts(name):
    texts, targets = line_count_task(200, seed=1)
    test_texts, test_targets = line_count_task(100, seed=2)
    predictions = make_baseline(name, **FAST[name]).fit(texts, targets).predict(test_texts)
    assert rho(predictions[:, 0], test_targets) > 0.8


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_missing_objectives_are_left_out(name):
    texts, lines = line_count_task(80, seed=3)
    rng = np.random.default_rng(0)
    targets = np.array([[n, 10.0 * n + 5] for n in lines])
    targets[rng.random(80) < 0.3, 1] = np.nan
    targets[:5, 0] = np.nan
    tasks = ["a"] * 40 + ["b"] * 40
    model = make_baseline(name, **FAST[name]).fit(texts, targets, tasks=tasks)
    out = model.predict(texts[:10], tasks=tasks[:10])
    assert out.shape == (10, 2) and np.isfinite(out).all()
    with pytest.raises(ValueError, match=r"objective\(s\) \[1\] have no value"):
        make_baseline(name, **FAST[name]).fit(texts, [[n, math.nan] for n in lines])


@pytest.mark.parametrize("name", ["gbdt", "knn", "length"])
def test_missing_rows_do_not_pull_predictions(name):
    # Objective 1 is present only on short texts; missing rows hold NaN, never a fake 0.
    texts, lines = line_count_task(150, seed=4)
    targets = np.array([[n, 100.0 + n if n <= 6 else np.nan] for n in lines])
    out = make_baseline(name, **FAST[name]).fit(texts, targets).predict(texts)
    assert (out[:, 1] > 90).all()
    assert rho(out[:, 0], lines) > 0.8


def test_regression_head_scaler_covers_a_task_without_an_objective():
    texts, lines = line_count_task(40, seed=5)
    targets = [[n, 2.0 * n if i < 20 else math.nan] for i, n in enumerate(lines)]
    tasks = ["a"] * 20 + ["b"] * 20  # task b never has objective 1: it gets the all-task scale
    model = RegressionHeadRegressor(**HEAD).fit(texts, targets, tasks=tasks)
    assert np.isfinite(model.predict(texts, tasks=tasks)).all()
    assert np.isfinite(model.predict(texts[:3], tasks=["unseen"] * 3)).all()
    assert model.scaler_ is not None and model.fit_report_["steps"] == 60
    raw = RegressionHeadRegressor(normalize=False, **HEAD).fit(texts, targets)
    assert raw.scaler_ is None


def test_use_log_target_rule():
    assert use_log_target(np.array([1.0, 1000.0]))
    assert not use_log_target(np.array([1.0, 50.0]))  # under two decades
    assert not use_log_target(np.array([0.0, 1000.0]))  # one nonzero magnitude: no span
    assert use_log_target(np.array([-1.0, 0.0, 1000.0]))  # signed log: zeros and negatives allowed
    assert use_log_target(np.array([np.nan, 1e-3, 1.0]))  # missing values are ignored
    values = np.array([-385e3, 0.0, 24.0, 1e6, 6.7e8])  # allocated bytes: none, a shrunk heap, decades
    scale = log_scale(values)
    assert scale == 2.4
    np.testing.assert_allclose(from_fit_space(to_fit_space(values, scale), scale), values, atol=1e-6)
    assert (np.diff(to_fit_space(np.sort(values), scale)) > 0).all()  # order kept


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gbdt", "knn", "length", "regression_head_log"])
def test_targets_spanning_decades_are_fitted_in_log_space(name):
    texts, lines = line_count_task(200, seed=6)
    test_texts, test_lines = line_count_task(100, seed=7)
    targets = [10 ** (n / 2) for n in lines]  # 3 .. 1e6
    model = make_baseline(name, **FAST[name]).fit(texts, targets)
    assert model.log_target_[0] > 0
    out = model.predict(test_texts)[:, 0]
    assert (out > 0).all()
    assert rho(out, test_lines) > 0.8
    ratio = out / np.array([10 ** (n / 2) for n in test_lines])
    assert 0.1 < np.median(ratio) < 10  # the right magnitude: typical error under a decade (two lines)


def test_text_length_line_and_units():
    texts = ["a", "a b c", "a b c d e f g"]
    model = TextLength(unit="tokens").fit(texts, [1.0, 3.0, 7.0])
    assert model.log_target_.tolist() == [0.0]
    np.testing.assert_allclose(model.coef_[0], np.polyfit(np.log1p([1, 3, 7]), [1, 3, 7], 1)[::-1])
    with pytest.raises(ValueError, match="unit"):
        TextLength(unit="lines").fit(texts, [1.0, 2.0, 3.0])


def test_featurizer_tokens_and_length_column():
    featurizer = NgramFeaturizer(ngram_range=(1, 1)).fit(["y = Conv2d(x, 3.5e-2) + x_1;"])
    names = featurizer.vectorizer_.get_feature_names_out().tolist()
    assert sorted(names) == sorted(["y", "=", "Conv2d", "(", "x", ",", "3.5e-2", ")", "+", "x_1", ";"])
    features = featurizer.transform(["x x ;", "zzz"])
    assert features.shape == (2, len(names) + 1)
    assert features[0, names.index("x")] == 2 and features[1, :-1].sum() == 0
    np.testing.assert_allclose(features[:, -1].toarray().ravel(), np.log1p([5, 3]))


def test_registry_and_unknown_name():
    heads = {"regression_head_norm", "regression_head_raw", "regression_head_log"}
    assert set(BASELINES) == heads | {"gbdt", "knn", "length"}
    assert make_baseline("regression_head_norm").normalize is True
    assert make_baseline("regression_head_raw").normalize is False
    log = make_baseline("regression_head_log")
    assert log.normalize is True and log.log_target is True
    assert make_baseline("knn", n_neighbors=3).n_neighbors == 3
    with pytest.raises(ValueError, match=r"unknown baseline 'xgboost'; known: \['gbdt', 'knn', 'length'"):
        make_baseline("xgboost")


def test_regression_head_rejects_bad_options():
    texts, targets = line_count_task(10, seed=8)
    with pytest.raises(ValueError, match=r"unknown model option\(s\) \['bogus'\]"):
        RegressionHeadRegressor(model={"bogus": 1}).fit(texts, targets)
    with pytest.raises(ValueError, match=r"\['pad_id'\] are set by RegressionHeadRegressor"):
        RegressionHeadRegressor(model={"pad_id": 3}).fit(texts, targets)
    with pytest.raises(ValueError, match=r"unknown training option\(s\) \['epochs'\]"):
        RegressionHeadRegressor(training={"epochs": 3}).fit(texts, targets)


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_predict_before_fit_and_bad_inputs(name):
    texts, targets = line_count_task(20, seed=9)
    with pytest.raises(RuntimeError, match="not fitted"):
        make_baseline(name).predict(texts)
    with pytest.raises(ValueError, match="3 task labels for 20 texts"):
        make_baseline(name).fit(texts, targets, tasks=["a", "b", "c"])
    with pytest.raises(ValueError, match="got 20 texts but 2 targets"):
        make_baseline(name).fit(texts, targets[:2])
    with pytest.raises(ValueError, match="not one string"):
        make_baseline(name).fit("one text", [1.0])


def test_baseline_names_refuse_a_typo_before_anything_trains():
    assert baseline_names("gbdt, knn") == ["gbdt", "knn"]
    assert baseline_names("") == [] and baseline_names("''") == []  # a quoted empty value kept by a shell variable
    with pytest.raises(ValueError, match=r"'gbtd'.*known: gbdt, knn"):
        baseline_names("gbtd,knn")
