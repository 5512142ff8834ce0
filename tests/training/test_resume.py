"""Trainer checkpoints and resume: a stopped run continues bit-identically, with its moving average and kept
weights; checkpoints are pruned, complete, and their state round-trips."""

import json

import numpy as np
import pytest
import torch

from coderlm.training import BatchSampler, Trainer
from coderlm.training.checkpoint import flatten_state, load_checkpoint, unflatten_state
from tests.training.toy import Toy, make_trainer


def test_resume_reproduces_the_uninterrupted_run(tmp_path):
    full = make_trainer(tmp_path / "full", checkpoint_every=5, log_every=1).run()
    # stop at step 12 (as Ctrl-C would), after the step-10 checkpoint
    first = make_trainer(tmp_path / "cut", checkpoint_every=5, log_every=1)
    first.sampler = _Stopping(first.sampler, stop_at=12)
    with pytest.raises(KeyboardInterrupt):
        first.run()
    assert (tmp_path / "cut" / "checkpoints" / "latest").read_text().strip() == "step-0000010"
    state_file = tmp_path / "cut" / "checkpoints" / "step-0000010" / "trainer.json"
    state = json.loads(state_file.read_text())
    state["extra"]["seconds"] = 1000.0  # as if the first ten steps had taken this long
    state_file.write_text(json.dumps(state))
    resumed = make_trainer(tmp_path / "cut", checkpoint_every=5, log_every=1, seed=123).run(resume=True)
    assert resumed.step == 20
    assert 1000.0 < resumed.seconds < 1000.0 + 60  # the time trained counts the earlier call's
    assert resumed.losses == full.losses[10:]  # bit-identical: same batches, RNG and optimizer state
    cut_curve = [json.loads(line)["loss"] for line in (tmp_path / "cut" / "metrics.jsonl").read_text().splitlines()]
    full_curve = [json.loads(line)["loss"] for line in (tmp_path / "full" / "metrics.jsonl").read_text().splitlines()]
    assert cut_curve == full_curve


class _Stopping:
    """Wraps a sampler; raises KeyboardInterrupt (like Ctrl-C) when asked for batch ``stop_at``."""

    def __init__(self, sampler: BatchSampler, stop_at: int) -> None:
        self.sampler, self.stop_at = sampler, stop_at

    def batch(self, step: int) -> np.ndarray:
        if step == self.stop_at:
            raise KeyboardInterrupt
        return self.sampler.batch(step)


def test_checkpoints_are_pruned_and_complete(tmp_path):
    make_trainer(tmp_path, checkpoint_every=3, keep_checkpoints=2).run()
    names = sorted(p.name for p in (tmp_path / "checkpoints").iterdir())
    assert names == ["latest", "step-0000018", "step-0000020"]
    model = Toy()
    state = load_checkpoint(tmp_path / "checkpoints" / "step-0000020", model)
    assert state["step"] == 20
    assert not list(tmp_path.glob("checkpoints/.*"))  # no half-written folders left


def test_resume_without_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing to resume"):
        make_trainer(tmp_path).run(resume=True)


def test_average_best_survives_resume(tmp_path):
    options = {
        "val": True,
        "steps": 40,
        "eval_every": 5,
        "checkpoint_every": 5,
        "learning_rate": 0.05,
        "average_best": 2,
    }
    full = make_trainer(tmp_path / "full", **options)
    full_result = full.run()
    first = make_trainer(tmp_path / "cut", **options)
    first.sampler = _Stopping(first.sampler, stop_at=27)
    with pytest.raises(KeyboardInterrupt):
        first.run()
    resumed = make_trainer(tmp_path / "cut", seed=123, **options)
    assert resumed.run(resume=True).kept_steps == full_result.kept_steps
    for got, want in zip(resumed.objective.parameters(), full.objective.parameters(), strict=True):
        assert torch.equal(got, want)
    with pytest.raises(ValueError, match="average_best was 2 when it was written"):
        make_trainer(tmp_path / "cut", **{**options, "average_best": 3}).run(resume=True)


def test_weights_validated_after_the_checkpoint_resumed_from_are_not_kept_twice(tmp_path):
    # validations every 5 steps, checkpoints every 10: stopped at step 17, the run resumes from step 10 and
    # validates step 15 again; the weights it kept at step 15 before the stop must not count twice
    options = {"val": True, "steps": 20, "eval_every": 5, "checkpoint_every": 10, "average_best": 2}
    scores = {5: 0.9, 10: 0.8, 15: 0.5, 20: 0.95}  # the best two: steps 15 and 10

    def scripted(trainer: Trainer, steps: list[int]) -> Trainer:
        trainer.val_loss = lambda module: scores[steps.pop(0)]
        return trainer

    assert scripted(make_trainer(tmp_path / "full", **options), [5, 10, 15, 20]).run().kept_steps == [15, 10]
    first = scripted(make_trainer(tmp_path / "cut", **options), [5, 10, 15])
    first.sampler = _Stopping(first.sampler, stop_at=17)
    with pytest.raises(KeyboardInterrupt):
        first.run()
    assert (tmp_path / "cut" / "checkpoints" / "latest").read_text().strip() == "step-0000010"
    resumed = scripted(make_trainer(tmp_path / "cut", **options), [15, 20])
    assert resumed.run(resume=True).kept_steps == [15, 10]


def test_average_best_resumes_from_a_checkpoint_before_any_validation(tmp_path):
    options = {"val": True, "steps": 20, "eval_every": 20, "checkpoint_every": 5, "average_best": 2}
    first = make_trainer(tmp_path, **options)
    first.sampler = _Stopping(first.sampler, stop_at=7)
    with pytest.raises(KeyboardInterrupt):
        first.run()
    assert make_trainer(tmp_path, **options).run(resume=True).kept_steps == [20]


def test_resume_restores_the_moving_average(tmp_path):
    full = make_trainer(tmp_path / "full", checkpoint_every=5, ema_decay=0.9)
    full.run()
    first = make_trainer(tmp_path / "cut", checkpoint_every=5, ema_decay=0.9)
    first.sampler = _Stopping(first.sampler, stop_at=12)
    with pytest.raises(KeyboardInterrupt):
        first.run()
    resumed = make_trainer(tmp_path / "cut", checkpoint_every=5, ema_decay=0.9, seed=123)
    resumed.run(resume=True)
    for got, want in zip(resumed.objective.parameters(), full.objective.parameters(), strict=True):
        assert torch.equal(got, want)
    with pytest.raises(ValueError, match="ema_decay was on when the checkpoint was written"):
        make_trainer(tmp_path / "cut").run(resume=True)


def test_state_flattening_round_trips():
    state = {"a": torch.ones(2), "b": [1, {"c": torch.zeros(3), 4: "x"}], "d": None}
    tensors: dict[str, torch.Tensor] = {}
    flat = flatten_state(state, tensors)
    json.dumps(flat)
    back = unflatten_state(json.loads(json.dumps(flat)), tensors)
    assert torch.equal(back["a"], state["a"]) and torch.equal(back["b"][1]["c"], state["b"][1]["c"])
    assert back["b"][1][4] == "x" and back["d"] is None  # int keys survive (optimizer state uses them)
