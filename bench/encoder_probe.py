"""What a frozen encoder's states say about cost: a ridge probe on mean-pooled states, out-of-fold Spearman.

Pretraining is meant to put what sets a program's cost into the encoder's states before any label is
seen. This bench measures that without training a number decoder: each encoder (a ``coderlm pretrain``
folder; ``untrained:FOLDER`` for its twin with fresh weights, one per ``--seeds``) reads every text once
with its own tokenizer, its last layer's states are mean-pooled over the real tokens, and a ridge
regression (standardized features, alpha chosen by internal cross-validation) predicts each objective in
the baselines' space (signed log where it spans decades) under 5-fold cross-validation. The table gives
the Spearman of the out-of-fold predictions. The floor beside them: the same ridge on bags of the same
tokenizer's token counts (what the tokens say with no encoder at all).

    python bench/encoder_probe.py --data out/qs600/nb201.jsonl \\
        --encoders out/onnx_enc,untrained:out/onnx_enc --json out/probe.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from scipy.stats import spearmanr
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from coderlm.data import read_dataset
from coderlm.evaluation import markdown_table
from coderlm.model.hf_encoder import load_body
from coderlm.numbers.log_space import log_scale, to_fit_space
from coderlm.text.hf_tokenizer import PretrainedTokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encoder_families import encoder_family, untrained_copy


def pooled_states(folder: str, texts: list[str], max_len: int, batch: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """(mean-pooled last-layer states, bag-of-token counts) of ``texts`` under the encoder in ``folder``."""
    tokenizer = PretrainedTokenizer.from_folder(folder)
    model = load_body(folder)[0].eval()
    states, counts = [], np.zeros((len(texts), tokenizer.vocab_size), dtype=np.float32)
    for start in range(0, len(texts), batch):
        tokens = tokenizer.encode(texts[start : start + batch], max_len)
        ids, mask = torch.from_numpy(tokens.ids), torch.from_numpy(tokens.mask)
        with torch.no_grad():
            hidden = model(input_ids=ids, attention_mask=mask.long()).last_hidden_state
        weights = mask.unsqueeze(-1).float()
        states.append(((hidden * weights).sum(1) / weights.sum(1)).numpy())
        for row, (line, real) in enumerate(zip(tokens.ids, tokens.mask, strict=True)):
            np.add.at(counts[start + row], line[real], 1.0)
    return np.concatenate(states), counts


def probe(features: np.ndarray, target: np.ndarray) -> float:
    """Spearman of 5-fold out-of-fold ridge predictions."""
    ridge = make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-2, 4, 13)))
    predicted = cross_val_predict(ridge, features, target, cv=KFold(5, shuffle=True, random_state=0))
    return float(spearmanr(predicted, target).statistic)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="a dataset (.jsonl) with text and targets")
    parser.add_argument("--encoders", required=True, help="FOLDER, untrained:FOLDER, builtin:<name> (comma-separated)")
    parser.add_argument("--objectives", default="", help="comma-separated (default: every target of the first row)")
    parser.add_argument("--seeds", default="0,1", help="seeds of the untrained twins")
    parser.add_argument("--max-len", type=int, default=640, help="tokens read per text")
    parser.add_argument("--json", type=Path, help="write {'results': [...]} here")
    args = parser.parse_args()
    rows = read_dataset(args.data)
    objectives = args.objectives.split(",") if args.objectives else list(rows[0].targets)
    missing = sorted({o for r in rows for o in objectives if o not in r.targets})
    if missing:
        raise SystemExit(f"{args.data}: objective(s) {missing} missing in some rows")
    texts = [r.text for r in rows]
    targets = {o: np.array([r.targets[o] for r in rows], dtype=np.float64) for o in objectives}
    targets = {o: to_fit_space(v, log_scale(v)) for o, v in targets.items()}

    results = []

    def record(method: str, encoder: str, seed: int | None, features: np.ndarray) -> None:
        row = {"method": method, "encoder": encoder, "seed": seed, "data": args.data.name, "rows": len(texts)}
        results.append(row | {o: probe(features, targets[o]) for o in objectives})
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)

    for spec in [e for e in args.encoders.split(",") if e]:
        kind, folder = encoder_family(spec)
        if kind not in ("pretrained", "untrained"):
            raise SystemExit(f"--encoders: {spec!r} is not an encoder folder or untrained:FOLDER")
        if kind == "pretrained":
            states, counts = pooled_states(folder, texts, args.max_len)
            record("ridge on mean-pooled states", spec, None, states)
            record("ridge on token counts", folder, None, counts)
            continue
        for seed in [int(s) for s in args.seeds.split(",")]:
            with tempfile.TemporaryDirectory(prefix="untrained-encoder-") as out:
                states, _ = pooled_states(untrained_copy(folder, seed, out), texts, args.max_len)
            record("ridge on mean-pooled states", spec, seed, states)

    print(markdown_table(results, ["method", "encoder", "seed", *objectives]))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"results": results}, indent=1))


if __name__ == "__main__":
    main()
