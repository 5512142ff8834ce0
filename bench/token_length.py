"""Input length in tokens: learned BPE with code-style vs line-level pre-tokenization.

Reads any dataset in the project format (e.g. NAS-Bench-201 ONNX text from
``coderlm collect nas``), learns each vocabulary on the first rows, and measures the
token count of the held-out rows: what the encoder context must hold.

    coderlm collect nas --count 40 --labels flops --out out/nb201_text
    python bench/token_length.py --data out/nb201_text/nb201.jsonl --json out/token_length.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from coderlm.data import read_dataset
from coderlm.evaluation import markdown_table
from coderlm.text import BPETokenizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="dataset (.jsonl or .parquet)")
    parser.add_argument("--train-fraction", type=float, default=0.75, help="rows that learn the vocabulary")
    parser.add_argument("--vocab-sizes", default="2048,8192", help="comma-separated")
    parser.add_argument("--json", type=Path, help="write {'results': [...]} here")
    args = parser.parse_args()

    texts = [example.text for example in read_dataset(args.data)]
    cut = max(1, int(len(texts) * args.train_fraction))
    train, test = texts[:cut], texts[cut:] or texts[:1]
    chars = float(np.median([len(t) for t in test]))
    rows = []
    for pretokenize in ("code", "lines"):
        for vocab in (int(v) for v in args.vocab_sizes.split(",")):
            start = time.perf_counter()
            tokenizer = BPETokenizer.train(train, vocab, pretokenize=pretokenize)
            seconds = time.perf_counter() - start
            lengths = np.array([len(ids) for ids in tokenizer.tokenize(test)])
            rows.append(
                {
                    "method": f"bpe-{pretokenize}",
                    "vocab_size": vocab,
                    "vocab_learned": tokenizer.vocab_size,
                    "median_tokens": float(np.median(lengths)),
                    "max_tokens": int(lengths.max()),
                    "median_chars": chars,
                    "chars_per_token": chars / float(np.median(lengths)),
                    "train_texts": len(train),
                    "test_texts": len(test),
                    "train_s": seconds,
                }
            )
    print(f"{args.data}: {len(train)} texts learn the vocabulary, {len(test)} are measured")
    print(
        markdown_table(
            rows,
            ["method", "vocab_size", "vocab_learned", "median_tokens", "max_tokens", "chars_per_token", "train_s"],
            floatfmt=".1f",
        )
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"results": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
