import numpy as np
import pytest

from coderlm.training import BatchSampler, TrainConfig


def _stream(sampler: BatchSampler, steps: int) -> np.ndarray:
    return np.concatenate([sampler.batch(step) for step in range(steps)])


@pytest.mark.parametrize("n", [96, 100, 7])  # batches aligned with epochs, straddling them, smaller than one
def test_length_buckets_keep_epochs_and_cut_padding(n):
    lengths = np.random.default_rng(1).integers(10, 1000, size=n)
    bs = 8
    plain, bucketed = BatchSampler(n, bs, seed=5), BatchSampler(n, bs, seed=5, lengths=lengths)
    steps = 3 * n // bs
    rows = _stream(bucketed, steps)
    for epoch in range(len(rows) // n):  # every row exactly once per epoch, as without buckets
        assert sorted(rows[epoch * n : (epoch + 1) * n].tolist()) == list(range(n))
    assert np.array_equal(rows, _stream(BatchSampler(n, bs, seed=5, lengths=lengths), steps))  # pure fn of seed

    def padded(sampler: BatchSampler) -> int:  # tokens in batches trimmed to their longest row
        return sum(len(b) * int(lengths[b].max()) for b in (sampler.batch(s) for s in range(steps)))

    if n > 2 * bs:
        assert padded(bucketed) < 0.75 * padded(plain)
        assert not np.array_equal(bucketed.batch(0), bucketed.batch(steps // 3))  # not the same order each epoch


def test_length_buckets_validate():
    with pytest.raises(ValueError, match="got \\(3,\\) lengths for 4 rows"):
        BatchSampler(4, 2, lengths=[1, 2, 3])
    with pytest.raises(ValueError, match="bucket_by_length needs task_sampling 'proportional'"):
        TrainConfig(bucket_by_length=True, task_sampling="temperature")


@pytest.mark.parametrize("estimator", ["rlm", "regression_head"])
def test_estimators_train_with_length_buckets(estimator, monkeypatch):
    """The option reaches the sampler: batches then come from rows of similar token length."""
    from coderlm import RegressionLM
    from coderlm.evaluation.baselines import RegressionHeadRegressor
    from coderlm.training import sampling

    seen = []
    original = sampling.BatchSampler.batch

    def recording(self, step):
        seen.append(self.lengths)
        return original(self, step)

    monkeypatch.setattr(sampling.BatchSampler, "batch", recording)
    texts = [" ".join(["x"] * (i % 13 + 1)) for i in range(40)]
    tiny = {"encoder_dim": 16, "decoder_dim": 16, "encoder_heads": 2, "decoder_heads": 2}
    training = {"steps": 3, "batch_size": 8, "bucket_by_length": True, "progress": False}
    if estimator == "rlm":
        RegressionLM(vocab_size=270, model=tiny, training=training).fit(texts, [len(t) for t in texts])
    else:
        RegressionHeadRegressor(vocab_size=270, model=tiny, training=training).fit(texts, [len(t) for t in texts])
    assert seen and seen[0] is not None and len(seen[0]) == 40


def test_sampler_proportional_epochs_cover_every_row():
    sampler = BatchSampler(10, 4, seed=3)
    rows = np.concatenate([sampler.batch(s) for s in range(5)])  # 20 rows = two epochs
    assert sorted(rows[:10]) == list(range(10)) and sorted(rows[10:]) == list(range(10))
    assert np.array_equal(BatchSampler(10, 4, seed=3).batch(4), sampler.batch(4))
    assert not np.array_equal(BatchSampler(10, 4, seed=4).batch(0), sampler.batch(0))


def test_sampler_temperature_flattens_task_mix():
    tasks = ["big"] * 900 + ["small"] * 100
    counts = {}
    for temperature in (1.0, 1e6):
        sampler = BatchSampler(1000, 100, 0, tasks, "temperature", temperature)
        rows = np.concatenate([sampler.batch(s) for s in range(50)])
        counts[temperature] = np.mean(np.asarray(tasks)[rows] == "small")
    assert counts[1.0] == pytest.approx(0.1, abs=0.02)  # T = 1: proportional
    assert counts[1e6] == pytest.approx(0.5, abs=0.03)  # T -> inf: uniform over tasks


def test_sampler_draws_tasks_by_given_weights():
    """``task_sampling="weights"``: each task's share of the rows is its weight, whatever its size."""
    tasks = ["big"] * 900 + ["small"] * 100
    config = TrainConfig(batch_size=100, task_sampling="weights", task_weights="small=3, big=1")
    sampler = BatchSampler.for_config(1000, config, tasks)
    rows = _stream(sampler, 50)
    assert np.mean(np.asarray(tasks)[rows] == "small") == pytest.approx(0.75, abs=0.03)
    assert np.array_equal(rows, _stream(BatchSampler.for_config(1000, config, tasks), 50))  # a pure fn of seed
    off = BatchSampler.for_config(1000, TrainConfig(task_sampling="weights", task_weights="small=1,big=0"), tasks)
    assert set(np.asarray(tasks)[_stream(off, 5)]) == {"small"}  # weight 0: never drawn


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"task_sampling": "weights"}, "task_weights is needed with task_sampling 'weights'"),
        ({"task_weights": "a=1"}, "task_weights applies with task_sampling 'weights', got 'proportional'"),
        ({"task_sampling": "weights", "task_weights": "a=x"}, "'a=x' is not TASK=W"),
        ({"task_sampling": "weights", "task_weights": "a=-1"}, "'a=-1' is not TASK=W"),
        ({"task_sampling": "weights", "task_weights": "a=1,a=2"}, "'a=2' is named twice"),
        ({"task_sampling": "weights", "task_weights": "a=0"}, "needs a weight above 0"),
    ],
)
def test_task_weights_must_be_well_formed(options, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig(**options)


def test_task_weights_must_name_every_task_and_only_them():
    tasks = ["a"] * 5 + ["b"] * 5
    for weights, message in [("a=1", r"no weight for task\(s\) \['b'\]"), ("a=1,b=1,c=1", r"\['c'\] not among")]:
        with pytest.raises(ValueError, match=message):
            BatchSampler.for_config(10, TrainConfig(task_sampling="weights", task_weights=weights), tasks)
    with pytest.raises(ValueError, match="no task labels"):
        BatchSampler.for_config(10, TrainConfig(task_sampling="weights", task_weights="a=1"), None)
