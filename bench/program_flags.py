"""``bench/programs.py``'s command line: the data, the RLM's recipe, the encoders, the baselines."""

from __future__ import annotations

import argparse
from pathlib import Path

from coderlm.evaluation.baselines import baseline_names
from coderlm.training.config import TASK_SAMPLING, TASK_WEIGHTS
from program_scores import OBJECTIVES

BASELINES = ["regression_head_norm", "regression_head_log", "gbdt", "knn", "length"]


def parse_args(doc: str) -> argparse.Namespace:
    """The bench's flags (``doc``: the bench's help text)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="mbxp", help="which collection: out/programs/<corpus>.jsonl (mbxp)")
    parser.add_argument("--data", type=Path, help="the dataset (default: out/programs/<corpus>.jsonl)")
    parser.add_argument(
        "--memory-label",
        default="auto",
        help="the memory target: auto (each row's meta.memory_label, else peak_memory_bytes) or a target name",
    )
    parser.add_argument("--languages", help="comma-separated subset (default: all in the file)")
    parser.add_argument("--splits", default="problem,random")
    parser.add_argument("--steps", type=int, default=3000, help="RLM training steps")
    parser.add_argument(
        "--max-train",
        type=int,
        default=0,
        help="keep the first N training programs of each split (seeded order; validation and test unchanged); 0: all",
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=0.0,
        help="RLM training option max_seconds: also stop after this many seconds, the schedule run by time",
    )
    parser.add_argument("--device", default="cpu", help="where the RLMs train and sample: cpu, cuda, cuda:N, auto")
    parser.add_argument("--precision", default="fp32", choices=["fp32", "bf16"], help="RLM training precision")
    parser.add_argument("--head-steps", type=int, default=1500, help="regression head training steps")
    parser.add_argument(
        "--head-validation",
        action="store_true",
        help="the regression heads train on the training rows and select their weights on the validation rows "
        "as the RLM does (its --val-metric, evaluations, --ema-decay, --patience, --average-best)",
    )
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--weight-decay", type=float, default=0.0, help="the RLM's AdamW decoupled weight decay")
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--max-input-len", type=int, default=512)
    parser.add_argument("--vocab-size", type=int, default=1024)
    parser.add_argument("--samples", type=int, default=128, help="samples per test input")
    parser.add_argument(
        "--val-metric",
        default="spearman",
        choices=["spearman", "loss"],
        help="which validation score picks the RLM's weights",
    )
    parser.add_argument(
        "--val-task-weights",
        default="rows",
        choices=TASK_WEIGHTS,
        help="ranking validation's mean over languages: each weighted by its validation rows, or all alike (the "
        "plain per-language mean the tables report)",
    )
    parser.add_argument(
        "--task-sampling",
        default="proportional",
        choices=TASK_SAMPLING,
        help="the RLM's training batches: every row equally often, or languages drawn by rows**(1/T)",
    )
    parser.add_argument(
        "--task-temperature", type=float, default=2.0, help="T of --task-sampling temperature (large: languages alike)"
    )
    parser.add_argument(
        "--rlm-objective",
        choices=OBJECTIVES,
        help="the RLMs learn this one target (its columns only; the other's are left empty); default: both, "
        "decoded one after the other",
    )
    parser.add_argument("--patience", type=int, default=4, help="stop after this many validations without gain")
    parser.add_argument(
        "--ema-decay",
        type=float,
        default=0.998,
        help="the RLM validates and keeps a moving average of its weights; 0: live",
    )
    parser.add_argument(
        "--average-best",
        type=int,
        default=2,
        help="the RLM returns the average of its N best-validating (averaged) weights",
    )
    parser.add_argument(
        "--seeds", type=int, default=1, help="RLMs to train (seeds 0..N-1), a row each; N > 1 adds one pooling them"
    )
    parser.add_argument(
        "--first-seed", type=int, default=0, help="the first RLM seed (seeds K..K+N-1: parallel runs take one each)"
    )
    parser.add_argument(
        "--digit-decay",
        type=float,
        default=1.0,
        help="the RLM's training option digit_decay: the k-th mantissa digit after the first weighs this**k "
        "in the loss (1: plain likelihood)",
    )
    parser.add_argument(
        "--aux-regression",
        type=float,
        default=0.0,
        help="the RLM's training option aux_regression: plus this x the error of a regression head on the "
        "pooled encoder while training (dropped after)",
    )
    parser.add_argument(
        "--target-noise",
        type=float,
        help="the RLM's training option target_noise: each step spells the training targets jittered by this x "
        "their standard deviation (0: exact; default: the library's, by the training rows)",
    )
    parser.add_argument(
        "--augment",
        type=int,
        default=0,
        help="the RLM's training option augment: rewritten copies of each Python training program (local names "
        "renamed, comments dropped, indentation re-spelled; coderlm.text.augment)",
    )
    parser.add_argument(
        "--encoders",
        default="scratch",
        help="comma-separated, a row family each: scratch, FOLDER (pretrained, fine-tuned; or a trained coderlm "
        "model, fine-tuned whole), untrained:FOLDER, frozen:FOLDER (bench/encoder_families.py); '' for baseline "
        "rows only",
    )
    parser.add_argument(
        "--init-learning-rate",
        type=float,
        default=3e-4,
        help="peak learning rate of RLMs started from a pretrained encoder (small BERTs fine-tune at 1e-4..5e-4)",
    )
    parser.add_argument(
        "--encoder-attention-dropout",
        type=float,
        default=None,
        help="model option encoder_attention_dropout of encoders fine-tuned from a folder (the RLM's and the "
        "head's): dropout on their attention weights; default: the encoder's own (BERT 0.1); 0: half the step time",
    )
    parser.add_argument(
        "--number-values",
        action="store_true",
        help="RLMs from scratch or fine-tuned from an encoder: digit tokens also embed their number's log10 value "
        "(model option number_values)",
    )
    parser.add_argument(
        "--extra-train",
        default="",
        help="comma-separated datasets of other collections whose rows (same --languages and memory label) join "
        "every split's training rows, never validation or test, for the RLM and the baselines alike: e.g. "
        "LeetCode Python beside MBXP Python, both labelled by the tracemalloc peak",
    )
    parser.add_argument(
        "--exact",
        action="store_true",
        help="also score each RLM's exact median (no samples, coderlm.decoding.walk): a row with point exact",
    )
    parser.add_argument(
        "--save-models",
        type=Path,
        help="save every RLM trained here to DIR/<split>-<encoder family>-seed<N> (then usable as --encoders FOLDER)",
    )
    parser.add_argument(
        "--runs",
        type=Path,
        help="train every RLM in a run folder DIR/<split>-<encoder family>-seed<N>, checkpointed every "
        "validation: run the same command again and a stopped RLM continues where it stopped, a finished one "
        "is loaded (hours-long schedules on a CPU, across sessions)",
    )
    parser.add_argument(
        "--pool",
        default="",
        help="comma-separated saved RLMs or finished run folders (e.g. of --runs) trained on this split: one more "
        "row, their samples pooled (coderlm.ensemble); one-target models (--rlm-objective) fill their column",
    )
    parser.add_argument(
        "--head-encoder",
        help="the regression-head baselines start from this pretrained encoder (a folder or builtin:<name>), "
        "fine-tuned at --init-learning-rate as the RLM is: the paper's ablation on the same pretrained encoder",
    )
    parser.add_argument("--baselines", default=",".join(BASELINES), help="comma-separated, or '' for none")
    parser.add_argument(
        "--baselines-read",
        choices=["all", "window"],
        default="all",
        help="the baselines read each whole text (default) or only what the RLM reads of it: the first "
        "--max-input-len tokens of a BPE learned as the RLM's",
    )
    parser.add_argument(
        "--json",
        type=Path,
        help="write {'results': [...], 'complete': bool, 'data': {...}} here, "
        "rewritten after every method so a stopped run keeps its finished rows",
    )
    args = parser.parse_args()
    args.pool = [Path(p) for p in args.pool.split(",") if p]
    for folder in args.pool:
        if not folder.is_dir():
            parser.error(f"--pool {folder}: no such folder")
    try:  # now, not after hours of training
        args.baselines = ",".join(baseline_names(args.baselines))
    except ValueError as e:
        parser.error(f"--baselines: {e}")
    return args
