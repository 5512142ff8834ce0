import itertools
import math
import warnings

import numpy as np
import pytest

from coderlm.evaluation import (
    best_of_group,
    group_spearman,
    interval_coverage,
    regression_metrics,
    spearman_by_task,
    task_spearman,
)


def test_perfect_and_reversed_rankings():
    up = regression_metrics([1, 2, 3, 4], [10, 20, 30, 40])
    assert up["spearman"] == pytest.approx(1) and up["kendall"] == pytest.approx(1)
    assert up["pearson"] == pytest.approx(1) and up["n"] == 4
    down = regression_metrics([4, 3, 2, 1], [10, 20, 30, 40])
    assert down["spearman"] == pytest.approx(-1) and down["kendall"] == pytest.approx(-1)
    assert down["pearson"] == pytest.approx(-1)


def test_errors_by_hand():
    out = regression_metrics([110, 90, 5], [100, 100, 0])
    assert out["mae"] == pytest.approx(25 / 3)
    assert out["mape"] == pytest.approx(0.1)  # the row measured 0 is left out of MAPE only
    assert math.isnan(regression_metrics([1, 2], [0, 0])["mape"])


def test_non_finite_rows_are_dropped():
    out = regression_metrics([1, np.nan, 2, 3, np.inf, 9], [1, 5, 2, 3, 4, -np.inf])
    assert out["n"] == 3 and out["mae"] == 0 and out["spearman"] == pytest.approx(1)
    empty = regression_metrics([np.nan], [1.0])
    assert empty["n"] == 0 and all(math.isnan(empty[k]) for k in ("spearman", "kendall", "pearson", "mae", "mape"))


def test_constant_inputs_give_nan_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for p, m in (([1, 1, 1], [1, 2, 3]), ([1, 2, 3], [5, 5, 5]), ([1.0], [2.0])):
            out = regression_metrics(p, m)
            assert math.isnan(out["spearman"]) and math.isnan(out["kendall"]) and math.isnan(out["pearson"])
        assert group_spearman([1, 1, 2, 2], [1, 2, 3, 4], ["a", "a", "b", "b"])["values"] == [0.0, 0.0]
        assert best_of_group([1, 1], [1, 2], ["a", "a"])["pairwise_accuracy"] == 0.5


def test_bad_shapes_are_named():
    with pytest.raises(ValueError, match="lengths differ"):
        regression_metrics([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="predicted must be 1-D"):
        regression_metrics([[1, 2]], [1, 2])
    with pytest.raises(ValueError, match="groups"):
        group_spearman([1, 2], [1, 2], ["a"])
    with pytest.raises(ValueError, match="top_fractions"):
        best_of_group([1, 2], [1, 2], ["a", "a"], top_fractions=(0,))


def test_group_spearman_by_hand():
    predicted = [1, 2, 2, 1, 1, 2, 3, 7, 8, 5, 1, 1, 0]
    measured = [1, 2, 1, 2, 1, 2, 3, 4, 4, 5, 1, 2, np.nan]
    groups = ["up", "up", "down", "down", "three", "three", "three", "flat", "flat", "one", "tied", "tied", "up"]
    out = group_spearman(predicted, measured, groups)
    # used: down (-1), three (1), tied (predictions all equal: 0), up (1); flat and one are skipped
    assert out["groups"] == 4
    np.testing.assert_allclose(out["values"], [-1, 1, 0, 1])
    assert out["mean"] == pytest.approx(0.25) and out["median"] == pytest.approx(0.5)
    none = group_spearman([1, 2], [3, 3], ["a", "a"])
    assert none["groups"] == 0 and none["values"] == [] and math.isnan(none["mean"])


def test_best_of_group_by_hand():
    # group A: the best-predicted row (p=1) measures 12, the best is 10
    # group B: the best-predicted row measures -4, tied with another row for best
    predicted = [2, 1, 3, 4, 5, 0, 1, 2, 3]
    measured = [10, 12, 11, 20, 30, -4, -2, -4, 0]
    groups = ["A"] * 5 + ["B"] * 4
    out = best_of_group(predicted, measured, groups, top_fractions=(0.1, 0.25, 0.5, 0.6))
    assert out["groups"] == 2
    assert out["regret_abs"] == pytest.approx((2 + 0) / 2)
    assert out["regret"] == pytest.approx((2 / 10 + 0) / 2)
    assert out["random_regret_abs"] == pytest.approx(((83 / 5 - 10) + (-10 / 4 + 4)) / 2)
    assert out["random_regret"] == pytest.approx(((83 / 5 - 10) / 10 + 1.5 / 4) / 2)
    assert out["hit_rate"] == 0.5
    # top rows kept in A: 10% and 25% of 5 -> 1 row, 50% -> 2 rows (10, 11), 60% -> 3 rows (10, 11, 12)
    assert out["top_10"] == 0.5 and out["top_25"] == 0.5 and out["top_50"] == 0.5 and out["top_60"] == 1
    # A: 8 of 10 pairs in order; B: 4 of 5 pairs with different measured values
    assert out["pairs"] == 15 and out["pairwise_accuracy"] == pytest.approx(12 / 15)


def test_best_of_group_prediction_ties_and_higher_is_better():
    tied = best_of_group([1, 1, 2], [1, 2, 3], ["g"] * 3)
    assert tied["hit_rate"] == 0.5 and tied["regret_abs"] == 0.5 and tied["regret"] == 0.5
    assert tied["pairwise_accuracy"] == pytest.approx(2.5 / 3)  # the tied pair counts 0.5
    accuracy = best_of_group([0.95, 0.85, 0.9], [0.7, 0.9, 0.8], ["g"] * 3, lower_is_better=False)
    assert accuracy["regret_abs"] == pytest.approx(0.2) and accuracy["regret"] == pytest.approx(0.2 / 0.9)
    assert accuracy["random_regret_abs"] == pytest.approx(0.1) and accuracy["hit_rate"] == 0
    assert accuracy["pairwise_accuracy"] == 0  # every pair reversed
    single = best_of_group([1, 2], [1, 2], ["a", "b"])
    assert single["groups"] == 0 and single["pairs"] == 0 and math.isnan(single["regret"])
    zero_best = best_of_group([1, 2], [0, 1], ["a", "a"])
    assert math.isnan(zero_best["regret"]) and zero_best["regret_abs"] == 0 and zero_best["hit_rate"] == 1


def test_pairwise_accuracy_matches_brute_force():
    rng = np.random.default_rng(0)
    predicted = rng.integers(0, 4, 60).astype(float)
    measured = rng.integers(0, 5, 60).astype(float)
    groups = rng.integers(0, 5, 60)
    score, pairs = 0.0, 0
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        for i, j in itertools.combinations(rows, 2):
            if measured[i] != measured[j]:
                pairs += 1
                same = np.sign(predicted[i] - predicted[j]) * np.sign(measured[i] - measured[j])
                score += 0.5 if same == 0 else float(same > 0)
    out = best_of_group(predicted, measured, groups)
    assert out["pairs"] == pairs and out["pairwise_accuracy"] == pytest.approx(score / pairs)


def test_interval_coverage_by_hand():
    lower = [0, 0, 0, np.nan]
    upper = [1, 2, 3, 1]
    measured = [0.5, 3, 3, 0.5]
    assert interval_coverage(lower, upper, measured) == pytest.approx(2 / 3)  # bounds are inclusive
    assert math.isnan(interval_coverage([np.nan], [1], [0]))


def test_task_spearman_ranks_within_tasks_weighted_by_rows():
    # pooled, task b's large values would look perfectly ranked; within it they are reversed
    predicted = [1, 2, 3, 4, 300, 200]
    measured = [1, 2, 3, 4, 100, 200]
    tasks = ["a", "a", "a", "a", "b", "b"]
    assert task_spearman(predicted, measured, tasks) == pytest.approx((4 * 1.0 + 2 * -1.0) / 6)
    assert task_spearman(predicted, measured) == pytest.approx(regression_metrics(predicted, measured)["spearman"])
    # a task of one row is skipped, one with constant predictions counts 0, non-finite rows are dropped
    assert task_spearman([1, 2, 3, 5, 5, 9], [1, 2, 3, 1, 2, 7], ["a", "a", "a", "b", "b", "c"]) == pytest.approx(0.6)
    assert task_spearman([1, 2, float("nan")], [1, 2, 3], ["a", "a", "a"]) == pytest.approx(1.0)
    assert math.isnan(task_spearman([1, 2], [3, 3], ["a", "a"]))


def test_spearman_by_task_names_each_tasks_ranking():
    predicted = [1, 2, 3, 4, 300, 200, 7]
    measured = [1, 2, 3, 4, 100, 200, 7]
    tasks = ["a", "a", "a", "a", "b", "b", "c"]  # c: one row, left out as task_spearman leaves it out
    assert spearman_by_task(predicted, measured, tasks) == pytest.approx({"a": 1.0, "b": -1.0})
    assert spearman_by_task([1, 2, 3], [3, 2, 1]) == pytest.approx({"": -1.0})
    assert spearman_by_task([1, 2], [float("nan"), 1], ["a", "a"]) == {}  # one finite row


def test_task_spearman_can_weigh_tasks_alike():
    predicted = [1, 2, 3, 4, 300, 200]
    measured = [1, 2, 3, 4, 100, 200]
    tasks = ["a", "a", "a", "a", "b", "b"]
    assert task_spearman(predicted, measured, tasks, "equal") == pytest.approx((1.0 + -1.0) / 2)
    # skipped tasks stay skipped: the one-row task c weighs nothing either way
    assert task_spearman([1, 2, 3, 5, 5, 9], [1, 2, 3, 1, 2, 7], ["a", "a", "a", "b", "b", "c"], "equal") == 0.5
    with pytest.raises(ValueError, match="task weights must be one of"):
        task_spearman(predicted, measured, tasks, "by size")
