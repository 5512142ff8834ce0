"""Pretrain coderlm's own encoder on this machine (the recipe: rerun it to reproduce the checkpoint).

The corpus is unlabelled code, none of it from a problem any bench tests on:

- LeetCode solutions in every language of ``../shared/data/leetcode`` (CC BY-SA 4.0), leaving out
  every problem the labelled LeetCode dataset draws on (``coderlm collect programs --corpus leetcode
  --limit LIMIT``: the first LIMIT problems with a harness per language, in any language): their
  solutions are what the programs bench trains and tests on;
- TheAlgorithms/Python (``../shared/data/thealgorithms``, MIT);
- KernelBench's PyTorch programs (``../shared/data/kernelbench``, MIT): PyTorch source, not the
  Inductor kernels the kernel bench tests;
- the Python standard library of this machine (``/usr/lib/python3.11``, its tests left out);
- with ``--site-packages``, the Python source of every package installed beside coderlm (torch, scipy,
  scikit-learn, sympy, ...: what ``pip install -e ".[dev]"`` with ``constraints.txt`` puts in the
  environment), tests left out, and transformers' ``models/`` folder (hundreds of near-copies of one
  file): ~160 MB more, for a GPU-sized run.

It is written to ``OUT/corpus.jsonl`` (one ``{"text": ...}`` per document) and pretrained with
``coderlm.pretraining.pretrain`` into ``OUT/encoder``; the command that does the same is printed.

    python scripts/pretrain_encoder.py --out out/pretrain      # corpus ~1 min, then the stated budget
    python scripts/pretrain_encoder.py --out out/pretrain_py --languages python --layers 2 --vocab-size 1024
        # Python only, the size and BPE of the programs bench's scratch RLM
    python scripts/pretrain_encoder.py --out out/gpu --languages python --site-packages --corpus-only
        # the corpus of scripts/gpu_pretrain.sh (pretraining on a GPU machine)
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import sysconfig
from pathlib import Path

from coderlm.atomic import write_atomic
from coderlm.collect.programs.corpora import shared_data
from coderlm.collect.programs.leetcode import load_leetcode
from coderlm.pretraining import pretrain

LABELLED_LANGUAGES = ["python", "cpp", "java", "go", "typescript", "javascript"]
RECIPE = {"vocab_size": 8192, "max_len": 512, "hidden_size": 128, "layers": 4, "heads": 4, "intermediate_size": 512}
TRAINING = {"steps": 1500, "batch_size": 16, "learning_rate": 1e-3, "eval_every": 250, "checkpoint_every": 250}


def labelled_problems(folder: Path, limit: int) -> set[int]:
    """Problem numbers the labelled LeetCode dataset (collected with ``--limit limit``) may hold."""
    jobs, skips = load_leetcode(folder, LABELLED_LANGUAGES, limit=limit)
    return {int(name.rsplit("/", 1)[1]) for name in [j.problem for j in jobs] + [s["problem"] for s in skips]}


def documents(
    data: Path, limit: int, languages: list[str] | None = None, site_packages: bool = False
) -> dict[str, list[str]]:
    """Source name -> its documents: LeetCode solutions in ``languages`` (default: every language) and
    the Python sources (TheAlgorithms, KernelBench, the standard library, with ``site_packages`` the
    installed packages) when Python is among them."""
    leetcode = data / "leetcode"
    held_out = labelled_problems(leetcode, limit)
    out: dict[str, list[str]] = {"leetcode": []}
    for path in sorted(leetcode.glob("solutions-*.jsonl.gz")):
        if languages and path.name.removeprefix("solutions-").removesuffix(".jsonl.gz") not in languages:
            continue
        with gzip.open(path, "rt") as file:
            rows = [json.loads(line) for line in file]
        out["leetcode"] += [r["code"] for r in rows if int(r["id"]) not in held_out]
    print(f"held out {len(held_out)} LeetCode problems (the labelled dataset's)", file=sys.stderr)
    if languages and "python" not in languages:
        return out
    with gzip.open(data / "thealgorithms" / "python.jsonl.gz", "rt") as file:
        out["thealgorithms"] = [json.loads(line)["code"] for line in file]
    out["kernelbench"] = [p.read_text() for p in sorted((data / "kernelbench").rglob("*.py"))]
    out["stdlib"] = python_files(Path(sysconfig.get_paths()["stdlib"]), {"site-packages", "idle_test", "lib2to3"})
    if site_packages:
        installed = Path(sysconfig.get_paths()["purelib"])
        out["site-packages"] = python_files(installed, {"coderlm", "__editable__"}, skip_paths={"transformers/models"})
    return out


def python_files(root: Path, skip_parts: set[str], skip_paths: set[str] = frozenset()) -> list[str]:
    """The UTF-8 ``.py`` files under ``root`` (sorted), test folders and ``skip_parts`` / ``skip_paths`` left out."""
    texts = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if set(relative.parts) & (skip_parts | {"test", "tests"}) or any(
            relative.as_posix().startswith(prefix + "/") for prefix in skip_paths
        ):
            continue
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            continue
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("out/pretrain"))
    parser.add_argument("--data", type=Path, help="the shared data folder (default: ../shared/data)")
    parser.add_argument("--limit", type=int, default=2000, help="--limit of the labelled LeetCode collection")
    parser.add_argument("--steps", type=int, default=TRAINING["steps"])
    parser.add_argument(
        "--languages", default="", help="comma-separated LeetCode languages (default: all); Python sources need python"
    )
    parser.add_argument("--layers", type=int, default=RECIPE["layers"], help="encoder blocks")
    parser.add_argument("--vocab-size", type=int, default=RECIPE["vocab_size"], help="BPE tokens")
    parser.add_argument("--site-packages", action="store_true", help="add the installed packages' Python source")
    parser.add_argument("--corpus-only", action="store_true", help="write OUT/corpus.jsonl and stop")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    corpus = args.out / "corpus.jsonl"
    if not corpus.is_file():
        languages = [lang for lang in args.languages.split(",") if lang] or None
        sources = documents(args.data or shared_data(), args.limit, languages, args.site_packages)
        lines = [json.dumps({"text": t, "source": name}) for name, texts in sources.items() for t in texts]
        args.out.mkdir(parents=True, exist_ok=True)
        write_atomic(corpus, "".join(line + "\n" for line in lines))
        counts = {name: (len(texts), sum(map(len, texts))) for name, texts in sources.items()}
        print(f"corpus: {json.dumps(counts)} (documents, characters)", file=sys.stderr)
    if args.corpus_only:
        return
    training = TRAINING | {"steps": args.steps}
    recipe = RECIPE | {"layers": args.layers, "vocab_size": args.vocab_size}
    flags = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in (recipe | training).items())
    print(f"coderlm pretrain --data {corpus} --out {args.out / 'encoder'} {flags}", file=sys.stderr)
    result = pretrain([corpus], args.out / "encoder", config=recipe, training=training, resume=args.resume)
    print(json.dumps(result.record["result"] | {"seconds": result.record["seconds"]}))


if __name__ == "__main__":
    main()
