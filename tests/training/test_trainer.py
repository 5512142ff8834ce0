import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from coderlm.training import BatchSampler, Callback, TrainConfig, Trainer
from coderlm.training.checkpoint import load_checkpoint
from tests.training.toy import QUIET, Toy, make_trainer


def test_loss_decreases_and_metrics_are_logged(tmp_path):
    trainer = make_trainer(tmp_path, steps=60, log_every=10, learning_rate=1e-2)
    result = trainer.run()
    assert result.step == 60 and len(result.losses) == 60
    assert np.mean(result.losses[-10:]) < 0.5 * np.mean(result.losses[:10])
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [10, 20, 30, 40, 50, 60]
    assert {"loss", "lr", "examples_per_s"} <= set(records[0])
    assert records[-1]["lr"] == pytest.approx(0.0, abs=1e-9)  # cosine decays to zero


def test_max_seconds_stops_by_time_validates_and_anneals(tmp_path):
    trainer = make_trainer(tmp_path, val=True, steps=10**7, max_seconds=0.5, log_every=1, learning_rate=1e-2)
    result = trainer.run()
    assert result.out_of_time and not result.stopped_early and 0 < result.step < 10**7
    assert result.val_losses[-1][0] == result.step  # the last step validates, as at the end of the steps
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert records[-1]["step"] == result.step and records[-1]["lr"] < 1e-2 * 0.05  # the cosine ran by time
    assert max(r["lr"] for r in records) > 1e-2 * 0.9  # after the warm-up, near the peak
    assert (tmp_path / "checkpoints" / "latest").is_file() and result.report("loss")["out_of_time"]


def test_schedule_follows_whichever_of_steps_or_seconds_runs_out_first():
    from coderlm.training.optim import build_scheduler, warmup_cosine

    seconds = [0.0]
    config = TrainConfig(steps=100, max_seconds=10.0, warmup_fraction=0.1, **QUIET)
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    factor = build_scheduler(optimizer, config, lambda: seconds[0]).lr_lambdas[0]
    plain = warmup_cosine(100, 0.1)
    assert factor(30) == pytest.approx(plain(30))  # time behind the steps: the step counts
    seconds[0] = 5.0
    assert factor(30) == pytest.approx(plain(50))  # half the time gone: half the schedule
    seconds[0] = 12.0
    assert factor(30) == pytest.approx(0.0)


def test_callbacks_hear_start_records_steps_and_end(tmp_path):
    class Recorder(Callback):
        def __init__(self):
            self.calls = []

        def on_start(self, step, steps):
            self.calls.append(("start", step, steps))

        def on_log(self, record):
            self.calls.append(("log", record["step"], "val_loss" in record))

        def on_step_end(self, step):
            self.calls.append(("step", step))

        def on_end(self):
            self.calls.append(("end",))

    trainer = make_trainer(tmp_path, val=True, steps=4, log_every=2, eval_every=4)
    recorder = Recorder()
    trainer.callbacks.append(recorder)
    trainer.run()
    assert recorder.calls == [
        ("start", 0, 4),
        ("step", 1),
        ("log", 2, False),
        ("step", 2),
        ("step", 3),
        ("log", 4, True),
        ("step", 4),
        ("end",),
    ]
    logged = [json.loads(line)["step"] for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert logged == [2, 4]  # the metrics file is a callback too, called first


def test_a_fresh_run_starts_a_fresh_metrics_file(tmp_path):
    (tmp_path / "metrics.jsonl").write_text('{"step": 7, "loss": 1.0}\n')  # left by an earlier, unfinished run
    make_trainer(tmp_path, steps=4, log_every=2).run()
    logged = [json.loads(line)["step"] for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert logged == [2, 4]


def test_early_stopping_restores_the_best_weights(tmp_path):
    trainer = make_trainer(tmp_path, val=True, steps=200, eval_every=5, patience=2, learning_rate=0.5)
    result = trainer.run()  # a huge learning rate: validation loss soon stops improving
    assert result.stopped_early and result.step < 200
    _, best = min(result.val_losses, key=lambda sv: sv[1])
    assert result.best_val_loss == best
    trainer.objective.eval()
    with torch.no_grad():
        assert trainer.val_loss(trainer.objective) == pytest.approx(best, rel=1e-6)
    assert (tmp_path / "best" / "model.safetensors").is_file()


def _recording_validation(trainer: Trainer) -> list[tuple[float, dict]]:
    """Wraps the trainer's validation; returns the list it fills with (score, weights validated)."""
    seen, score = [], trainer.val_loss

    def val_loss(module):
        value = score(module)
        seen.append((value, {k: v.detach().clone() for k, v in module.state_dict().items()}))
        return value

    trainer.val_loss = val_loss
    return seen


def test_average_best_returns_the_mean_of_the_best_validating_weights(tmp_path):
    trainer = make_trainer(
        tmp_path, val=True, steps=40, eval_every=5, learning_rate=0.05, ema_decay=0.8, average_best=3
    )
    seen = _recording_validation(trainer)
    result = trainer.run()
    assert len(seen) == 8
    best = sorted(range(8), key=lambda i: seen[i][0])[:3]
    assert result.kept_steps == [5 * (i + 1) for i in best]
    for name, value in trainer.objective.state_dict().items():  # the mean of the three, by hand
        want = (seen[best[0]][1][name] + seen[best[1]][1][name] + seen[best[2]][1][name]) / 3
        torch.testing.assert_close(value, want, rtol=1e-5, atol=1e-7)
    kept = json.loads((tmp_path / "best" / "kept.json").read_text())
    assert kept["average_best"] == 3 and [e["step"] for e in kept["kept"]] == result.kept_steps
    files = sorted(p.name for p in (tmp_path / "best").glob("*.safetensors"))
    assert files == sorted(["model.safetensors", *(e["file"] for e in kept["kept"])])  # dropped ones removed
    on_disk = load_file(str(tmp_path / "best" / "model.safetensors"))
    for name, value in trainer.objective.state_dict().items():
        assert torch.equal(on_disk[name], value)


class _Recording:
    """Wraps a sampler; records the live trainable weights before each step."""

    def __init__(self, sampler: BatchSampler, model: torch.nn.Module) -> None:
        self.sampler, self.model, self.weights = sampler, model, []

    def batch(self, step: int) -> np.ndarray:
        self.weights.append([p.detach().clone() for p in self.model.parameters()])
        return self.sampler.batch(step)


def test_moving_average_is_the_returned_model():
    live = make_trainer(steps=30, learning_rate=1e-2)
    live.sampler = _Recording(live.sampler, live.objective)
    live.run()
    trajectory = [*live.sampler.weights[1:], [p.detach() for p in live.objective.parameters()]]
    average = [w.clone() for w in live.sampler.weights[0]]
    for step, weights in enumerate(trajectory):  # the weights after each step, averaged by hand
        decay = min(0.9, (1 + step) / (10 + step))
        average = [decay * a + (1 - decay) * w for a, w in zip(average, weights, strict=True)]
    averaged = make_trainer(steps=30, learning_rate=1e-2, ema_decay=0.9)
    averaged.run()
    for got, want in zip(averaged.objective.parameters(), average, strict=True):
        torch.testing.assert_close(got.detach(), want, rtol=1e-5, atol=1e-6)
    assert not torch.allclose(average[0], trajectory[-1][0])  # the average is not the last weights


def test_moving_average_is_validated_without_disturbing_training(tmp_path):
    plain = make_trainer(val=True, steps=40, eval_every=5, learning_rate=0.05).run()
    trainer = make_trainer(tmp_path, val=True, steps=40, eval_every=5, learning_rate=0.05, ema_decay=0.8)
    averaged = trainer.run()
    assert averaged.losses == plain.losses  # evaluating the average puts the live weights back exactly
    assert [v for _, v in averaged.val_losses] != [v for _, v in plain.val_losses]
    trainer.objective.eval()
    with torch.no_grad():  # the kept model is the best average, as validated
        assert trainer.val_loss(trainer.objective) == pytest.approx(averaged.best_val_loss, rel=1e-6)


def test_gradient_accumulation_matches_one_big_batch():
    whole, halves = make_trainer(steps=5, grad_accum=1), make_trainer(steps=5, grad_accum=2)
    for trainer in (whole, halves):
        trainer.objective.net[1].p = 0.0  # no dropout, so the two runs see the same function
    np.testing.assert_allclose(whole.run().losses, halves.run().losses, rtol=1e-5)


def test_adafactor_trains():
    result = make_trainer(steps=40, optimizer="adafactor", learning_rate=1e-2).run()
    assert np.mean(result.losses[-5:]) < np.mean(result.losses[:5])


@pytest.mark.parametrize(
    "options, message",
    [
        ({"grad_accum": 3, "batch_size": 8}, "grad_accum=3 must divide batch_size=8"),
        ({"optimizer": "sgd"}, "optimizer must be one of"),
        ({"steps": 0}, "steps must be a positive integer"),
        ({"precision": "fp8"}, "precision must be one of"),
        ({"ema_decay": 1.0}, "ema_decay must be in"),
        ({"average_best": 0}, "average_best must be a positive integer"),
        ({"digit_decay": 0.0}, "digit_decay must be in"),
        ({"digit_decay": 1.5}, "digit_decay must be in"),
        ({"aux_regression": -0.5}, "aux_regression must be >= 0"),
        ({"max_seconds": -1.0}, "max_seconds must be >= 0"),
    ],
)
def test_config_errors_name_the_option(options, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig(**options)


DDP_SCRIPT = """
import json, sys, torch, torch.distributed as dist
from coderlm.training import BatchSampler, Callback, TrainConfig, Trainer
from coderlm.training.distributed import exit_process, shutdown_distributed
from tests.training.toy import Toy, collate_for, toy_data
torch.manual_seed(0)
x, y = toy_data()
config = TrainConfig(steps=6, batch_size=8, progress=False, log_every=1)
trainer = Trainer(Toy(), config, BatchSampler(len(x), 8, 0), collate_for(x, y), run_dir=sys.argv[1])
result = trainer.run()
flat = torch.cat([p.detach().flatten() for p in trainer.objective.parameters()])
gathered = [torch.zeros_like(flat) for _ in range(dist.get_world_size())]
dist.all_gather(gathered, flat)
report = {"rank": dist.get_rank(), "same": all(torch.equal(g, flat) for g in gathered), "losses": result.losses}
with open(f"{sys.argv[1]}-rank{dist.get_rank()}.json", "w") as f:  # one file per rank: stdout lines interleave
    json.dump(report, f)
if shutdown_distributed():
    exit_process(0)
"""


@pytest.mark.slow
def test_ddp_two_cpu_processes(tmp_path):
    script = tmp_path / "ddp.py"
    script.write_text(DDP_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        str(script),
        str(tmp_path / "run"),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    reports = [json.loads((tmp_path / f"run-rank{rank}.json").read_text()) for rank in (0, 1)]
    assert sorted(r["rank"] for r in reports) == [0, 1]
    assert all(r["same"] for r in reports)  # gradients were averaged: replicas stay identical
    assert reports[0]["losses"] == reports[1]["losses"]  # the logged loss is the mean over ranks
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    assert len(lines) == 6  # only rank 0 writes


def test_bf16_autocast_trains():
    """The bf16 path (meant for CUDA) runs on CPU too: losses finite and falling."""
    result = make_trainer(steps=30, precision="bf16", learning_rate=1e-2).run()
    assert np.isfinite(result.losses).all() and np.mean(result.losses[-5:]) < np.mean(result.losses[:5])


@pytest.mark.slow
def test_torch_compile_matches_eager(tmp_path):
    """torch.compile changes how the step runs, not what it computes; checkpoints hold plain weights."""
    eager, compiled = make_trainer(steps=4), make_trainer(tmp_path, steps=4, compile=True)
    for trainer in (eager, compiled):
        trainer.objective.net[1].p = 0.0
    np.testing.assert_allclose(eager.run().losses, compiled.run().losses, rtol=1e-4)
    load_checkpoint(tmp_path / "checkpoints" / "step-0000004", Toy())  # no "_orig_mod." prefixes
