"""The regression-head baseline's network and target scaling."""

import numpy as np
import pytest
import torch

from coderlm.evaluation.baselines.regression_head import RegressionHead, TargetScaler
from tests.conftest import tiny_config


def test_regression_head_shapes_and_mse(inputs):
    ids, mask = inputs
    model = RegressionHead(tiny_config(), num_outputs=2)
    out = model(ids, mask)
    assert out.shape == (3, 2)
    targets = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    expected = ((out - targets) ** 2).mean()
    torch.testing.assert_close(model.loss(ids, mask, targets), expected)
    weights = torch.tensor([[1.0, 0.0]] * 3)
    torch.testing.assert_close(model.loss(ids, mask, targets, weights), ((out[:, 0] - targets[:, 0]) ** 2).mean())


def test_target_scaler_per_task_min_max():
    targets = np.array([[0.0, 10.0], [10.0, 30.0], [100.0, 5.0], [300.0, 5.0]])
    tasks = ["a", "a", "b", "b"]
    scaler = TargetScaler().fit(targets, tasks)
    scaled = scaler.transform(targets, tasks)
    np.testing.assert_allclose(scaled, [[0, 0], [1, 1], [0, 0], [1, 0]])  # constant column: span 1
    np.testing.assert_allclose(scaler.inverse(scaled, tasks), targets)
    # an unseen task falls back to the scale over all tasks
    np.testing.assert_allclose(scaler.transform(np.array([[300.0, 30.0]]), ["c"]), [[1.0, 1.0]])
    again = TargetScaler.from_dict(scaler.to_dict())
    np.testing.assert_allclose(again.transform(targets, tasks), scaled)


def test_head_trains_on_reordered_copies_of_onnx_texts():
    from coderlm.evaluation.baselines import make_baseline
    from tests.text.test_onnx_order import BLOCK

    texts = [BLOCK.replace("{0.5}", f"{{{i}}}") for i in range(6)] + ["|a~0|", "|b~1|"]
    tiny = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}
    training = {"steps": 2, "augment": 3, "progress": False}
    head = make_baseline("regression_head_norm", vocab_size=300, model=tiny, training=training)
    head.fit(texts, np.arange(8.0), tasks=["a"] * 4 + ["b"] * 4)
    assert head.fit_report_["examples"] == 8 + 6  # one other order exists per network; cell strings get none
    assert head.predict(texts[:2], tasks=["a", "a"]).shape == (2, 1)


def _cost_rows(n: int, seed: int) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 9, size=n)
    return [" ".join(["x"] * int(k)) + f" y{int(k) % 3}" for k in sizes], sizes[:, None] * 10.0


def _head(val_metric: str, steps: int = 6):
    from coderlm.evaluation.baselines import make_baseline

    tiny = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}
    training = {"steps": steps, "eval_every": 2, "val_metric": val_metric, "progress": False, "batch_size": 8}
    return make_baseline("regression_head_norm", vocab_size=300, model=tiny, training=training)


def test_head_keeps_the_weights_that_validate_best():
    from scipy.stats import spearmanr

    texts, targets = _cost_rows(24, 0)
    val_texts, val_targets = _cost_rows(12, 1)
    head = _head("spearman").fit(texts, targets, val_texts=val_texts, val_targets=val_targets)
    report = head.fit_report_
    assert [step for step, _ in report["val_losses"]] == [2, 4, 6]
    best = min(loss for _, loss in report["val_losses"])
    assert report["best_val_loss"] == best and report["val_metric"] == "spearman"
    assert report["best_step"] == next(step for step, loss in report["val_losses"] if loss == best)
    # the model returned is the one that scored best: its predictions rank the validation rows as it did
    rho = spearmanr(head.predict(val_texts)[:, 0], val_targets[:, 0]).statistic
    assert 1.0 - rho == pytest.approx(best, abs=1e-9)


def test_head_ranking_validation_can_weigh_tasks_alike():
    from coderlm.evaluation import task_spearman

    texts, targets = _cost_rows(24, 0)
    val_texts, val_targets = _cost_rows(12, 1)
    val_tasks = ["a"] * 8 + ["b"] * 4
    head = _head("spearman", steps=2)  # one validation, before the head ranks every task perfectly
    head.training = {**head.training, "val_task_weights": "equal"}
    head.fit(texts, targets, val_texts=val_texts, val_targets=val_targets, val_tasks=val_tasks)
    predicted = head.predict(val_texts, tasks=val_tasks)[:, 0]
    equal = task_spearman(predicted, val_targets[:, 0], val_tasks, "equal")
    assert equal != pytest.approx(task_spearman(predicted, val_targets[:, 0], val_tasks, "rows"))  # they differ here
    assert 1.0 - equal == pytest.approx(head.fit_report_["best_val_loss"], abs=1e-9)


def test_head_validation_by_loss_scores_the_scaled_targets():
    texts, targets = _cost_rows(24, 0)
    val_texts, val_targets = _cost_rows(12, 1)
    head = _head("loss").fit(texts, targets, val_texts=val_texts, val_targets=val_targets)
    scaled = head.scaler_.transform(val_targets)
    predicted = head.scaler_.transform(head.predict(val_texts))
    assert np.mean((predicted - scaled) ** 2) == pytest.approx(head.fit_report_["best_val_loss"], rel=1e-5)


def test_head_without_validation_reports_no_selection():
    texts, targets = _cost_rows(16, 0)
    head = _head("spearman", steps=2).fit(texts, targets)
    assert "best_step" not in head.fit_report_ and head.fit_report_["steps"] == 2


@pytest.mark.parametrize(
    ("val_texts", "val_targets", "message"),
    [(["x y0"], None, "both val_texts and val_targets"), (["x y0"], [[1.0, 2.0]], "2 objective")],
)
def test_head_validation_rows_are_checked(val_texts, val_targets, message):
    texts, targets = _cost_rows(16, 0)
    with pytest.raises(ValueError, match=message):
        _head("loss").fit(texts, targets, val_texts=val_texts, val_targets=val_targets)
