"""A new device from a few measurements: NAS-Bench-201 latency on HELP's six unseen devices.

The shipped model ``builtin:nb201`` (``scripts/train_builtin_nb201.py``) writes CIFAR-10 accuracy and
latency on HELP's 13 source devices from a network's ONNX text. For each of HELP's target devices
(never seen), N networks of the training pool are "measured" (their latency from the table), and each
method ranks the 1,000 test networks (the test set of ``bench/nasbench201.py``, which the shipped
model never trained on). Rows, per N and device, mean over ``--seeds`` draws of the N networks:

- ``rlm readout (builtin)``: the shipped model unchanged, the device read out of its 13 predicted
  latencies by a ridge regression fitted on the N (``coderlm readout``; ``coderlm.readout``), applied to
  every sample, median;
- ``proxy devices (ridge)``: the same ridge over the benchmark's *measured* source latencies (a stronger
  proxy baseline; it needs every network measured on all 13 devices);
- ``rlm (builtin, context)``: the shipped model fine-tuned on the N networks with its own predictions of
  its 14 objectives as context and the device as a 15th objective, which starts from the source device
  that ranks the N best (``coderlm train --init builtin:nb201 --context init``), median of the samples;
- ``rlm (init: builtin)`` (``--transfers single``): the same with the device as its one objective;
- ``rlm`` (``init: scratch``): the same RLM trained from scratch on the N networks;
- ``gbdt``, ``knn``: the n-gram baselines trained on the N networks;
- ``proxy device``: rank by the source device whose measured latencies (from the table) rank the N
  networks best: a strong baseline (it needs every network measured on that device);
- ``zero-shot``: the same, with the shipped model's *predicted* source latencies: works for any network;
- ``help (published)``: HELP's mean Spearman over the six devices at N = 10, 0.932 (its README, Table 3).

With ``--calibration M`` the fine-tuned RLM is also calibrated (split conformal) on M further measured
networks of the pool, and the coverage of its 50/80/90% intervals on the test networks is reported
before and after.

    python bench/fewshot.py --json out/fewshot.json
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from coderlm import RegressionLM
from coderlm.atomic import write_atomic
from coderlm.collect.programs.corpora import shared_data
from coderlm.data import read_dataset
from coderlm.decoding import central_interval, point_estimate
from coderlm.decoding.calibration import calibrate
from coderlm.evaluation import markdown_table
from coderlm.evaluation.baselines import make_baseline
from coderlm.readout import fit_readout

TARGETS = ["titan_rtx_256", "gold_6226", "fpga", "pixel2", "raspi4", "eyeriss"]
HELP = {10: 0.932}  # HELP (NeurIPS 2021), mean over these six devices, its README Table 3


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    return float(spearmanr(a, b).statistic)


def coverage(intervals: np.ndarray, truth: np.ndarray) -> float:
    return float(((intervals[:, 0] <= truth) & (truth <= intervals[:, 1])).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="builtin:nb201", help="the shipped model (or a folder trained the same way)")
    parser.add_argument(
        "--data", type=Path, default=Path("out/nb201_all/nb201.jsonl"), help="ONNX text of all networks"
    )
    parser.add_argument("--csv", type=Path, default=shared_data() / "nasbench201" / "nasbench201.csv")
    parser.add_argument("--ns", default="5,10,20,50,100", help="measured networks per device")
    parser.add_argument("--devices", default=",".join(TARGETS))
    parser.add_argument("--seeds", type=int, default=3, help="draws of the N networks")
    parser.add_argument("--steps", type=int, default=150, help="fine-tuning steps")
    parser.add_argument("--learning-rate", type=float, default=3e-4, help="fine-tuning learning rate")
    parser.add_argument(
        "--transfers",
        default="context",
        help="fine-tuning rows: context (the init's objectives first), single ('' for none: the fast rows only)",
    )
    parser.add_argument("--scratch-ns", default="20,100", help="N at which an RLM is also trained from scratch")
    parser.add_argument("--scratch-steps", type=int, default=300)
    parser.add_argument("--samples", type=int, default=32, help="samples per test network")
    parser.add_argument("--test", type=int, default=1000, help="test networks used (the first of the 1,000)")
    parser.add_argument(
        "--calibration", type=int, default=100, help="extra measured networks to calibrate on (0: none)"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"{args.data}: not found (python scripts/train_builtin_nb201.py collects it)")
    shipped = RegressionLM.load(args.model)
    shipped.batch_size = 128
    rows = {r.group: r for r in read_dataset(args.data)}
    with open(args.csv, newline="") as f:
        table = {row["arch"]: row for row in csv.DictReader(f)}
    order = np.random.default_rng(0).permutation(len(table))
    cells = list(table)
    test = [cells[i] for i in order[-1000:]][: args.test]
    pool = [cells[i] for i in order[:-1000]]
    sources = [o for o in shipped.objectives_ if o.startswith("lat_ms_")]
    measured_sources = lambda cs: np.log([[float(table[c][o]) for o in sources] for c in cs])  # noqa: E731
    start = time.perf_counter()
    samples_test = shipped.sample([rows[c].text for c in test], num_samples=args.samples, seed=0)
    predicted_test = point_estimate(samples_test)
    print(f"shipped model on {len(test)} test networks: {time.perf_counter() - start:.0f} s")
    columns = [shipped.objectives_.index(o) for o in sources]
    results, by_method = [], {}
    for n in map(int, args.ns.split(",")):
        for device in args.devices.split(","):
            truth = np.array([float(table[c][f"lat_ms_{device}"]) for c in test])
            for seed in range(args.seeds):
                rng = np.random.default_rng([seed, n])
                shots = [pool[i] for i in rng.choice(len(pool), n + args.calibration, replace=False)]
                shots, held = shots[:n], shots[n:]
                y = np.array([float(table[c][f"lat_ms_{device}"]) for c in shots])
                texts = [rows[c].text for c in shots]
                scores: dict[str, float] = {}
                best = int(np.argmax([spearman(s, y) for s in measured_sources(shots).T]))
                scores["proxy device"] = spearman(measured_sources(test)[:, best], truth)
                predicted_shots = point_estimate(shipped.sample(texts, num_samples=args.samples, seed=0))
                best = int(np.argmax([spearman(predicted_shots[:, j], y) for j in columns]))
                scores["zero-shot"] = spearman(predicted_test[:, columns[best]], truth)
                record = {"n": n, "task": device, "seed": seed}
                extra: dict[str, dict] = {"rlm readout (builtin)": {}}  # per method: its coverage figures
                readout = fit_readout(device, predicted_shots, y, columns)
                readout_test = readout.apply(samples_test)[..., None]  # (n, S, 1): every sample read out
                scores["rlm readout (builtin)"] = spearman(point_estimate(readout_test)[:, 0], truth)
                ridge = fit_readout(device, np.exp(measured_sources(shots)), y, range(len(sources)))
                scores["proxy devices (ridge)"] = spearman(ridge.apply(np.exp(measured_sources(test))), truth)
                if args.calibration and n == 20:
                    held_samples = shipped.sample([rows[c].text for c in held], num_samples=args.samples, seed=1)
                    held_y = [float(table[c][f"lat_ms_{device}"]) for c in held]
                    conformal = calibrate(readout.apply(held_samples)[..., None], held_y)
                    for level in (0.5, 0.8, 0.9):
                        key = f"coverage_{level * 100:g}"
                        extra["rlm readout (builtin)"][key] = coverage(
                            central_interval(readout_test, level)[:, 0], truth
                        )
                        widened = conformal.interval(readout_test, level)
                        extra["rlm readout (builtin)"][key + "_calibrated"] = coverage(widened[:, 0], truth)
                for transfer in filter(None, args.transfers.split(",")):
                    name = {"single": "rlm (init: builtin)", "context": "rlm (builtin, context)"}[transfer]
                    start = time.perf_counter()
                    tuned = RegressionLM(
                        num_samples=args.samples,
                        batch_size=128,
                        training={
                            "steps": args.steps,
                            "batch_size": min(n, 32),
                            "learning_rate": args.learning_rate,
                            "seed": seed,
                            "progress": False,
                        },
                    )
                    context = "init" if transfer == "context" else ()
                    tuned.fit(texts, y, objectives=[f"lat_ms_{device}"], init=shipped, context=context)
                    extra[name] = {"finetune_s": time.perf_counter() - start}
                    samples = tuned.sample([rows[c].text for c in test], num_samples=args.samples, seed=0)[..., -1:]
                    scores[name] = spearman(point_estimate(samples)[:, 0], truth)
                    if args.calibration and n == 20:
                        held_y = np.full((len(held), tuned.codec_.num_objectives), np.nan)
                        held_y[:, -1] = [float(table[c][f"lat_ms_{device}"]) for c in held]
                        tuned.calibrate([rows[c].text for c in held], held_y)
                        for level in (0.5, 0.8, 0.9):
                            key = f"coverage_{level * 100:g}"
                            extra[name][key] = coverage(central_interval(samples, level)[:, 0], truth)
                            full = np.zeros((*samples.shape[:2], tuned.codec_.num_objectives))
                            full[..., -1:] = samples
                            interval = tuned.calibration_.interval(full, level)[:, -1]
                            extra[name][key + "_calibrated"] = coverage(interval, truth)
                if str(n) in args.scratch_ns.split(","):
                    scratch = RegressionLM(
                        vocab_size=1024,
                        pretokenize="lines",
                        max_input_len=128,
                        batch_size=128,
                        num_samples=args.samples,
                        model={"encoder_dim": 64, "decoder_dim": 64},
                        training={
                            "steps": args.scratch_steps,
                            "batch_size": min(n, 32),
                            "seed": seed,
                            "progress": False,
                        },
                    )
                    scratch.fit(texts, y, objectives=[f"lat_ms_{device}"])
                    scores["rlm (init: scratch)"] = spearman(scratch.predict([rows[c].text for c in test])[:, 0], truth)
                small = {"gbdt": {"min_samples_leaf": max(1, min(20, n // 5))}, "knn": {"n_neighbors": min(5, n)}}
                for name, options in small.items():  # leaves and neighbours that N rows can fill
                    model = make_baseline(name, **options).fit(texts, y)
                    scores[name] = spearman(model.predict([rows[c].text for c in test])[:, 0], truth)
                for method, rho in scores.items():
                    by_method.setdefault((n, method), []).append(rho)
                    results.append({"method": method, **record, **extra.get(method, {}), "spearman": rho})
                print(
                    f"N={n} {device} seed {seed}: " + ", ".join(f"{k} {v:.3f}" for k, v in scores.items()), flush=True
                )
                if args.json:
                    write_atomic(args.json, json.dumps({"results": results, "complete": False}, indent=2) + "\n")
    for (n, method), values in sorted(by_method.items()):
        results.append(
            {
                "method": method,
                "n": n,
                "task": "mean",
                "spearman": float(np.mean(values)),
                "spread": float(np.std(values)),
            }
        )
    for n, rho in HELP.items():
        results.append({"method": "help (published)", "n": n, "task": "mean", "spearman": rho})
    means = [r for r in results if r["task"] == "mean"]
    ns = sorted({r["n"] for r in means})
    table_rows = [
        {
            "method": m,
            **{f"N={n}": next((r["spearman"] for r in means if r["method"] == m and r["n"] == n), None) for n in ns},
        }
        for m in dict.fromkeys(r["method"] for r in means)
    ]
    print(markdown_table(table_rows, floatfmt=".3f"))
    for method in dict.fromkeys(r["method"] for r in results if "coverage_90" in r):
        calibrated = [r for r in results if "coverage_90" in r and r["method"] == method]
        for level in ("50", "80", "90"):
            before = np.mean([r[f"coverage_{level}"] for r in calibrated])
            after = np.mean([r[f"coverage_{level}_calibrated"] for r in calibrated])
            print(f"N=20, {method}: {level}% intervals on the test networks: coverage {before:.3f} -> {after:.3f}")
    if args.json:
        write_atomic(args.json, json.dumps({"results": results, "complete": True}, indent=2) + "\n")


if __name__ == "__main__":
    main()
