"""``coderlm quickstart``: the whole loop on real neural networks, measured on this machine.

1. collect: sample NAS-Bench-201 cells, build each network in PyTorch, export it to
   ONNX, serialize the graph as text and label it with its FLOPs (exact, from the graph)
   and its CPU latency (onnxruntime, measured here);
2. split by architecture into train / val / test;
3. train a small RLM on the ONNX text to predict ``latency_cpu`` and ``flops``, keeping the
   weights that rank the validation networks best (``val_metric="spearman"``);
4. evaluate on the held-out architectures beside the baselines: a table on screen and
   a report with plots;
5. predict for one ``.onnx`` file of an architecture never collected, as
   ``coderlm predict`` does, and measure it to compare.

Every stage leaves its output in the run folder and a rerun picks up where the last one
stopped: collection resumes row by row, training from its latest checkpoint.

The defaults finish in 7-14 minutes on an idle 2-core CPU (half of it exporting networks): 200
networks with one cell per stage (the NAS-Bench-201 skeleton has five) and a 2+2-layer
model. Scale up with --count, --cells-per-stage 5, --steps and --workers, e.g.

    coderlm quickstart --count 1000 --cells-per-stage 5 --steps 3000 --out runs/nb201

(a 5-cell network takes ~3 s to export; --workers 2 halves that, but latency measured
while another worker exports is noisier: keep --workers 1 for the cleanest labels).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import torch

from coderlm.cli.evaluate import evaluate_run
from coderlm.cli.flags import add_flags, dataclass_options
from coderlm.cli.predict import predict_records, read_inputs
from coderlm.cli.train import train_run
from coderlm.collect.nets.collect import collect_nas, done_cells, sample_cells
from coderlm.collect.nets.nb201 import build_network
from coderlm.data import split_dataset
from coderlm.estimator import RegressionLM
from coderlm.evaluation.baselines import BASELINES as KNOWN_BASELINES

OBJECTIVES = ["latency_cpu", "flops"]
BASELINES = ["regression_head_norm", "gbdt", "knn", "length"]


@dataclasses.dataclass(frozen=True)
class QuickstartConfig:
    out: str = "runs/quickstart"  # run folder: data/, model/, report/, example.onnx
    count: int = 200  # architectures to collect (of 15,625)
    cells_per_stage: int = 1  # cells per stage of the NB201 skeleton (the benchmark's networks have 5)
    workers: int = 1  # export processes (>1 is faster but adds noise to the measured latency)
    latency_threads: int = 1  # onnxruntime threads when measuring latency
    steps: int = 600  # RLM training steps (batch 16)
    model_dim: int = 128  # encoder and decoder width
    vocab_size: int = 1024  # input BPE vocabulary, line-level merges (larger: shorter texts, fewer shared tokens)
    max_input_len: int = 640  # encoder context in tokens (the longest 1-cell network is ~520)
    num_samples: int = 64  # samples per prediction
    baselines: str = ",".join(BASELINES)  # comma-separated, trained on the same split ('' for none)
    seed: int = 0  # which architectures, the split, the training
    device: str = "cpu"  # torch device for training and prediction

    def __post_init__(self) -> None:
        checks = {
            "count": self.count >= 10,
            "cells_per_stage": self.cells_per_stage >= 1,
            "workers": self.workers >= 1,
            "latency_threads": self.latency_threads >= 1,
            "steps": self.steps >= 1,
            "model_dim": self.model_dim >= 8,
            "vocab_size": self.vocab_size >= 260,
            "max_input_len": self.max_input_len >= 8,
            "num_samples": self.num_samples >= 1,
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            limits = {"count": ">= 10", "vocab_size": ">= 260", "model_dim": ">= 8", "max_input_len": ">= 8"}
            raise ValueError(", ".join(f"--{n.replace('_', '-')} must be {limits.get(n, '>= 1')}" for n in bad))
        unknown = sorted(set(self.baseline_names) - set(KNOWN_BASELINES))
        if unknown:
            raise ValueError(f"--baselines: unknown {unknown}; known: {sorted(KNOWN_BASELINES)}")

    @property
    def baseline_names(self) -> list[str]:
        return [name.strip() for name in self.baselines.split(",") if name.strip()]


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "quickstart",
        help="collect real networks, train, evaluate vs baselines, predict (minutes)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_flags(p, dataclass_options(QuickstartConfig), "options (all optional)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(QuickstartConfig)}
    run_quickstart(QuickstartConfig(**{k: v for k, v in given.items() if v is not None}))
    return 0


def run_quickstart(config: QuickstartConfig, say=print) -> dict[str, Any]:
    """Run every stage; returns the evaluation metrics, the example prediction and stage timings."""
    out = Path(config.out)
    timings: dict[str, float] = {}

    say(f"[1/5] collect {config.count} NAS-Bench-201 networks -> ONNX text, FLOPs, CPU latency")
    start = time.perf_counter()
    report = collect_nas(
        out / "data" / "nb201.jsonl",
        config.count,
        ["flops", "params", "latency_cpu"],
        seed=config.seed,
        workers=config.workers,
        cells_per_stage=config.cells_per_stage,
        latency_threads=config.latency_threads,
    )
    timings["collect_s"] = time.perf_counter() - start

    say("[2/5] split by architecture: train 70% / val 10% / test 20%")
    parts = split_dataset(
        report.path, out / "data", {"train": 0.7, "val": 0.1, "test": 0.2}, seed=config.seed, by_group=True
    )

    say(f"[3/5] train an RLM on ONNX text to predict {', '.join(OBJECTIVES)} ({config.steps} steps)")
    start = time.perf_counter()
    model_dir = out / "model"
    train_run(
        parts["train"],
        model_dir,
        val=parts["val"],
        objectives=OBJECTIVES,
        model={"encoder_dim": config.model_dim, "decoder_dim": config.model_dim, "dropout": 0.1},
        training={
            "steps": config.steps,
            "batch_size": 16,
            "learning_rate": 1e-3,
            "seed": config.seed,
            "bucket_by_length": True,
            "val_metric": "spearman",
            "eval_every": max(config.steps // 8, 1),
            "checkpoint_every": max(config.steps // 4, 1),
        },
        estimator={
            "vocab_size": config.vocab_size,
            "pretokenize": "lines",
            "max_input_len": config.max_input_len,
            "num_samples": config.num_samples,
            "device": config.device,
        },
        resume=(model_dir / "checkpoints").exists(),
    )
    timings["train_s"] = time.perf_counter() - start

    say(f"[4/5] evaluate on held-out architectures beside {', '.join(config.baseline_names) or 'no baselines'}")
    start = time.perf_counter()
    metrics = evaluate_run(
        model_dir,
        parts["test"],
        out / "report",
        baselines=config.baseline_names,
        train_data=parts["train"],
        seed=config.seed,
    )
    timings["evaluate_s"] = time.perf_counter() - start

    say("[5/5] predict for a new .onnx file, then measure it")
    example = predict_new_network(config, report.path, model_dir, out / "example.onnx")
    say(json.dumps(example))
    say(f"report: {out / 'report' / 'report.md'}; model: {model_dir} (use it with `coderlm predict --model`)")
    summary = {"timings": {k: round(v, 1) for k, v in timings.items()}, "example": example}
    (out / "quickstart.json").write_text(json.dumps(summary, indent=2) + "\n")
    return {"metrics": metrics, **summary}


def predict_new_network(config: QuickstartConfig, dataset: Path, model_dir: Path, path: Path) -> dict[str, Any]:
    """Export a cell not in ``dataset`` to ``path``, predict it from the file, then measure it."""
    # the onnx extra: export, cost and latency load onnx / onnxruntime
    from coderlm.collect.nets.latency import measure_latency
    from coderlm.collect.nets.onnx_cost import graph_cost
    from coderlm.collect.nets.onnx_export import export_onnx, load_onnx, save_onnx

    seen = done_cells(dataset)
    cell = next(c for c in sample_cells(None, config.seed + 1) if c not in seen)
    torch.manual_seed(0)
    save_onnx(export_onnx(build_network(cell, cells_per_stage=config.cells_per_stage)), path)
    rlm = RegressionLM.load(model_dir, device=config.device)
    (record,) = predict_records(rlm, read_inputs([str(path)]), num_samples=config.num_samples, seed=config.seed)
    model = load_onnx(path)
    measured = {
        "latency_cpu": measure_latency(model, threads=config.latency_threads)["median_ms"],
        "flops": float(graph_cost(model)["flops"]),
    }
    return {"cell": cell, **record, **{f"{name}_measured": value for name, value in measured.items()}}
