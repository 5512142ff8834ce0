"""Train the shipped model ``builtin:nb201`` (the recipe: rerun it to reproduce the model).

One RLM reads a NAS-Bench-201 network as ONNX text (5 cells per stage, the benchmark's networks,
the graph PyTorch's exporter writes; ``coderlm collect nas``) and writes its CIFAR-10 accuracy, then
its latency on the 13 *source* devices of HELP's split (NeurIPS 2021): the devices a few-shot
user's new device is compared with. HELP's 6 *target* devices are never seen, so ``bench/fewshot.py``
measures transfer to them. Test set: the 1,000 test networks of ``bench/nasbench201.py`` (the last
1,000 of ``numpy.random.default_rng(0).permutation(15625)``); everything else trains (500 of it
validates). The weights are stored in fp16 with a model card in ``src/coderlm/builtin/nb201``.

    python scripts/train_builtin_nb201.py            # ~8 min of text, then training (see MODEL_CARD.md)
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from scipy.stats import kendalltau, spearmanr

from coderlm import RegressionLM
from coderlm.builtin import HERE
from coderlm.collect.nets.collect import collect_nas
from coderlm.collect.programs.corpora import shared_data
from coderlm.data import read_dataset

SOURCES = [
    "1080ti_1",
    "1080ti_32",
    "1080ti_256",
    "silver_4114",
    "silver_4210r",
    "samsung_a50",
    "pixel3",
    "essential_ph_1",
    "samsung_s7",
    "titanx_1",
    "titanx_32",
    "titanx_256",
    "gold_6240",
]
TARGETS = ["titan_rtx_256", "gold_6226", "fpga", "pixel2", "raspi4", "eyeriss"]  # HELP's unseen devices
OBJECTIVES = ["c10_test_acc_200ep"] + [f"lat_ms_{d}" for d in SOURCES]
TEXT = {"vocab_size": 4096, "pretokenize": "lines"}  # a line-level BPE, as bench/nasbench201.py reads ONNX
NETWORKS = 15625


def test_cells(cells_in_order: list[str]) -> set[str]:
    """The 1,000 test networks of bench/nasbench201.py (the CSV's row order is the benchmark's index)."""
    order = np.random.default_rng(0).permutation(NETWORKS)
    return {cells_in_order[i] for i in order[-1000:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", type=Path, default=shared_data() / "nasbench201" / "nasbench201.csv")
    parser.add_argument("--data", type=Path, default=Path("out/nb201_all/nb201.jsonl"), help="ONNX-text dataset")
    parser.add_argument("--run", type=Path, default=Path("runs/builtin_nb201"), help="training run folder")
    parser.add_argument("--out", type=Path, default=HERE / "nb201", help="where the shipped model goes")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument(
        "--max-input-len",
        type=int,
        default=128,
        help="tokens read: 128 cover the stem and the first cells (every cell of a network is the same cell)",
    )
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=32, help="samples per test network for the model card")
    args = parser.parse_args()
    start = time.perf_counter()
    collect_nas(args.data, None, ["flops", "params"], join_csv=args.csv, workers=args.workers, cells_per_stage=5)
    collect_s = time.perf_counter() - start
    rows = list(read_dataset(args.data))
    with open(args.csv, newline="") as f:
        held = test_cells([row["arch"] for row in csv.DictReader(f)])
    test = [r for r in rows if r.group in held]
    rest = [r for r in rows if r.group not in held]
    rest = [rest[i] for i in np.random.default_rng(1).permutation(len(rest))]
    val, train = rest[:500], rest[500:]
    targets = lambda part: np.array([[r.targets[o] for o in OBJECTIVES] for r in part])  # noqa: E731
    print(f"train {len(train)}, val {len(val)}, test {len(test)}; text {collect_s:.0f} s")
    model = {"encoder_dim": args.dim, "decoder_dim": args.dim, "dropout": 0.1}
    training = {
        "steps": args.steps,
        "batch_size": 64,
        "learning_rate": 1e-3,
        "eval_every": args.steps // 10,
        "checkpoint_every": args.steps // 10,
        "bucket_by_length": True,
        "ema_decay": 0.998,
    }
    rlm = RegressionLM(
        **TEXT, max_input_len=args.max_input_len, model=model, training=training, num_samples=64, batch_size=64
    )
    start = time.perf_counter()
    rlm.fit(
        [r.text for r in train],
        targets(train),
        objectives=OBJECTIVES,
        val_texts=[r.text for r in val],
        val_targets=targets(val),
        run_dir=args.run,
        resume=(args.run / "checkpoints").exists(),
    )
    train_s = time.perf_counter() - start
    predicted = np.median(rlm.sample([r.text for r in test], num_samples=args.samples, seed=0), axis=1)
    measured = targets(test)
    figures = {
        o: {
            "spearman": round(float(spearmanr(predicted[:, j], measured[:, j]).statistic), 3),
            "kendall": round(float(kendalltau(predicted[:, j], measured[:, j]).statistic), 3),
        }
        for j, o in enumerate(OBJECTIVES)
    }
    args.out.mkdir(parents=True, exist_ok=True)
    rlm.save(args.out)
    weights = args.out / "model.safetensors"
    save_file({k: v.to(torch.float16) for k, v in load_file(str(weights)).items()}, str(weights))
    card = {
        "objectives": OBJECTIVES,
        "source_devices": SOURCES,
        "target_devices_never_seen": TARGETS,
        "train": len(train),
        "val": len(val),
        "test": len(test),
        "train_s": round(train_s),
        "steps": rlm.fit_report_["steps"],
        "max_input_len": args.max_input_len,
        "test_figures": figures,
        "samples": args.samples,
    }
    (args.out / "card.json").write_text(json.dumps(card, indent=2) + "\n")
    (args.out / "MODEL_CARD.md").write_text(model_card(card))
    print(json.dumps(card, indent=2))


def model_card(card: dict) -> str:
    table = "\n".join(f"| {o} | {f['spearman']:.3f} | {f['kendall']:.3f} |" for o, f in card["test_figures"].items())
    return f"""# builtin:nb201

Reads a NAS-Bench-201 network as ONNX text (5 cells per stage; `coderlm collect nas`, compact style;
an `.onnx` file as `coderlm predict` reads it) and writes its CIFAR-10 test accuracy (200 epochs), then
its latency (ms, batch as the device was measured) on HELP's 13 source devices:
{", ".join(card["source_devices"])}. HELP's target devices ({", ".join(card["target_devices_never_seen"])})
were never seen: `coderlm train --init builtin:nb201 --data my_device.jsonl` adds one from a few
measurements (docs/fewshot.md).

Recipe: `python scripts/train_builtin_nb201.py` (in the repository). Data: `../shared/data/nasbench201`
(NAS-Landscapes accuracies, HELP latencies; MIT); {card["train"]} networks train, {card["val"]} validate,
{card["test"]} test (the test set of `bench/nasbench201.py`). {card["steps"]} steps of 64, {card["train_s"]} s
on 2 CPU cores; weights stored in fp16.

Test figures ({card["test"]} networks never trained on; median of {card["samples"]} samples):

| objective | Spearman | Kendall |
| --- | --- | --- |
{table}
"""


if __name__ == "__main__":
    main()
