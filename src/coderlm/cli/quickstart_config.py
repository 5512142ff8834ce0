"""The options of ``coderlm quickstart`` (both flows), each a flag; bad values are refused before any work."""

from __future__ import annotations

import dataclasses

from coderlm.evaluation.baselines import BASELINES as KNOWN_BASELINES

BASELINES = ["regression_head_norm", "gbdt", "knn", "length"]


@dataclasses.dataclass(frozen=True)
class QuickstartConfig:
    out: str = "runs/quickstart"  # run folder: data/, model/, report/
    from_scratch: bool = False  # the longer flow: collect networks, train a new RLM, evaluate it beside baselines
    model: str = "builtin:nb201"  # few-shot: the trained model to start from
    shots: int = 20  # few-shot: networks measured here to read out (or fine-tune) and calibrate on (90% needs 9)
    calibration: int = 0  # few-shot: more networks measured to calibrate on (0: the shots, each left out)
    networks: int = 200  # few-shot: other networks predicted, then measured to compare
    finetune: bool = False  # few-shot: also fine-tune the shipped model on the shots and compare (slower)
    learning_rate: float = 1e-4  # few-shot: fine-tuning learning rate (with --finetune)
    steps: int = 0  # training steps; 0: 150 fine-tuning steps (with --finetune), or 1200 with --from-scratch
    count: int = 200  # from scratch: architectures to collect (of 15,625)
    cells_per_stage: int = 1  # from scratch: cells per stage (the benchmark's networks, used few-shot, have 5)
    workers: int = 1  # from scratch: export processes (>1 is faster but adds noise to the measured latency)
    latency_threads: int = 1  # onnxruntime threads when measuring latency
    model_dim: int = 128  # from scratch: encoder and decoder width
    vocab_size: int = 1024  # from scratch: input BPE vocabulary, line-level merges
    max_input_len: int = 640  # from scratch: encoder context in tokens (the longest 1-cell network is ~520)
    num_samples: int = 64  # samples per prediction
    baselines: str = ",".join(BASELINES)  # from scratch: comma-separated, trained on the same split ('' for none)
    seed: int = 0  # which architectures, the split, the training
    device: str = "cpu"  # torch device for training and prediction

    def __post_init__(self) -> None:
        checks = {
            "shots": self.shots >= (2 if self.calibration else 4),
            "calibration": self.calibration >= 0,
            "networks": self.networks >= 2,
            "count": self.count >= 10,
            "cells_per_stage": self.cells_per_stage >= 1,
            "workers": self.workers >= 1,
            "latency_threads": self.latency_threads >= 1,
            "steps": self.steps >= 0,
            "model_dim": self.model_dim >= 8,
            "vocab_size": self.vocab_size >= 260,
            "max_input_len": self.max_input_len >= 8,
            "num_samples": self.num_samples >= 1,
        }
        limits = {
            "count": ">= 10",
            "vocab_size": ">= 260",
            "model_dim": ">= 8",
            "max_input_len": ">= 8",
            "shots": ">= 2" if self.calibration else ">= 4 (calibrated on the shots; or give --calibration)",
            "networks": ">= 2",
            "steps": ">= 0",
            "calibration": ">= 0",
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise ValueError(", ".join(f"--{n.replace('_', '-')} must be {limits.get(n, '>= 1')}" for n in bad))
        unknown = sorted(set(self.baseline_names) - set(KNOWN_BASELINES))
        if unknown:
            raise ValueError(f"--baselines: unknown {unknown}; known: {sorted(KNOWN_BASELINES)}")

    @property
    def baseline_names(self) -> list[str]:
        return [name.strip() for name in self.baselines.split(",") if name.strip()]
