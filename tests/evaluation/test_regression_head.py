"""The regression-head baseline's network and target scaling."""

import numpy as np
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
