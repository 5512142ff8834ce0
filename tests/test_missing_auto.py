"""missing="auto" in a multi-task fit: an objective a task never has is learned as <NaN> and predicted as
NaN (most samples <NaN>: it does not apply); a row missing its own task's value is skipped."""

import numpy as np
import pytest

from coderlm import RegressionLM
from coderlm.data.toy import line_count_task

TINY = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}
QUICK = {"steps": 2, "batch_size": 8, "progress": False}


def test_missing_auto_learns_nan_for_a_task_without_the_objective_and_skips_failed_rows():
    """Two tasks with their own objectives (a multi-task dataset): "auto" learns <NaN> where a task never has
    an objective, and skips a row whose own task's value is missing; without tasks it is "skip"."""
    texts, lines = line_count_task(24, seed=5)
    tasks = ["a" if i % 2 else "b" for i in range(24)]
    rows = [[n, None] if task == "a" else [None, n + 1.0] for n, task in zip(lines, tasks, strict=True)]
    rows[1] = [None, None]  # task a's own value missing: a failed measurement
    rlm = RegressionLM(vocab_size=300, model=TINY, training=QUICK)
    rlm.fit(texts, rows, missing="auto", tasks=tasks)
    assert rlm.fit_report_["examples"] == 23 and "nan" in rlm.codec_.specials
    assert rlm.fit_report_["missing"] == {"given": "auto", "applied": "special", "skipped": 1}
    alone = RegressionLM(vocab_size=300, model=TINY, training=QUICK)
    with pytest.raises(ValueError, match="no rows left after skipping 24"):
        alone.fit(texts, rows, missing="auto")  # without tasks, every row misses a value its one task has
    whole = [[n, n + 1.0] for n in lines[:23]] + [[None, 1.0]]
    alone.fit(texts, whole, missing="auto")
    assert alone.fit_report_["missing"]["applied"] == "skip" and "nan" not in alone.codec_.specials


def _two_tasks(n: int, seed: int) -> tuple[list[str], list[list], list[str]]:
    """Task a: line counts in the first objective; task b: twice them in the second; each names its task."""
    texts, lines = line_count_task(n, seed=seed, max_lines=4)
    tasks = ["a" if i % 2 else "b" for i in range(n)]
    texts = [f"task: {task}\n{text}" for task, text in zip(tasks, texts, strict=True)]
    rows = [[count, None] if task == "a" else [None, 2.0 * count] for count, task in zip(lines, tasks, strict=True)]
    return texts, rows, tasks


def test_an_objective_a_task_never_has_is_predicted_as_nan():
    texts, rows, tasks = _two_tasks(200, seed=7)
    training = {"steps": 200, "batch_size": 32, "progress": False}
    rlm = RegressionLM(vocab_size=300, max_input_len=48, model=TINY, training=training)
    rlm.fit(texts, rows, missing="auto", tasks=tasks)
    held, _, held_tasks = _two_tasks(60, seed=8)
    predicted = rlm.predict(held, num_samples=16)
    a = np.asarray(held_tasks) == "a"
    assert np.isnan(predicted[a, 1]).mean() >= 0.9 and np.isnan(predicted[~a, 0]).mean() >= 0.9  # not theirs
    assert np.isnan(predicted[a, 0]).mean() <= 0.1 and np.isnan(predicted[~a, 1]).mean() <= 0.1  # their own
    exact = rlm.predict(held, point="exact")  # the quantile walk reads the <NaN> mass alike
    assert np.isnan(exact[a, 1]).mean() >= 0.9 and np.isnan(exact[~a, 0]).mean() >= 0.9
    assert np.isnan(exact[a, 0]).mean() <= 0.1 and np.isnan(exact[~a, 1]).mean() <= 0.1
