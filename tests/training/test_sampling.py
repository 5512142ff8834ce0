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
