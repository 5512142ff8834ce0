#!/usr/bin/env bash
# Pretrain two encoders on a GPU machine and fine-tune RLMs from them, in one command of ~8 minutes.
#
# The GPU-scale run of issue 22 (docs/results.md, "Pretraining on a GPU"): masked-span denoising on the
# corpus of `scripts/pretrain_encoder.py --site-packages` (181 MB of Python: this environment's installed
# packages, the standard library, TheAlgorithms, KernelBench, LeetCode solutions outside the labelled
# set), two encoders side by side, each for PRETRAIN_S seconds of training (the schedule runs by time):
#   small: BERT 2 x 128, 1,024-token BPE (the scratch RLM's size; pretrained 64 CPU-minutes before)
#   base:  BERT 4 x 256, 8,192-token BPE (coderlm pretrain's defaults)
# Then RLMs on Python memory and runtime of unseen problems (bench/programs.py, split by problem) for
# MBXP and LeetCode: from scratch, fine-tuned from each encoder, and each encoder's untrained twin.
# Every RLM trains for at most FINETUNE_S seconds (the bench's 3,000 steps, patience 4, otherwise).
#
# Prepare here (CPU), then run on the GPU machine:
#   python scripts/pretrain_encoder.py --out out/gpu_corpus --languages python --site-packages --corpus-only
#   mkdir -p out/gpu && gzip -c out/gpu_corpus/corpus.jsonl > out/gpu/corpus.jsonl.gz
#   cp out/programs/mbxp.jsonl out/gpu/ && cp out/lcpy/leetcode.jsonl out/gpu/
#   OUT=out/gpu_result bash scripts/gpu_pretrain.sh    # results.tgz, encoder-small.tgz, encoder-base.tgz
#
# Every step writes into WORK; results.tgz (JSON rows, logs, learning curves) is refreshed every 20 s,
# so a run stopped at its time limit still returns what it finished.
set -u
DATA=${DATA:-out/gpu}
WORK=${WORK:-/tmp/gpu_pretrain}
OUT=${OUT:-out/gpu_result}
DEVICE=${DEVICE:-cuda}
PRETRAIN_S=${PRETRAIN_S:-170}
FINETUNE_S=${FINETUNE_S:-200}
SAMPLES=${SAMPLES:-128}
BPE_CHARS=${BPE_CHARS:-40000000}
PY=${PYTHON:-python3}
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH}
R=$WORK/results
mkdir -p "$R" "$OUT"
say() { echo "[$(date +%T)] $*" | tee -a "$R/timeline.log"; }

pack() {
    for enc in small base; do
        [ -f "$WORK/enc-$enc/metrics.jsonl" ] && cp "$WORK/enc-$enc/metrics.jsonl" "$R/pretrain-$enc.metrics.jsonl"
        [ -f "$WORK/enc-$enc/pretrain.json" ] && cp "$WORK/enc-$enc/pretrain.json" "$R/pretrain-$enc.json"
    done
    tar czf "$OUT/results.tgz.part" -C "$R" . && mv "$OUT/results.tgz.part" "$OUT/results.tgz"
}

rlm() {  # name dataset encoder seed: one RLM row of bench/programs.py
    "$PY" bench/programs.py --data "$2" --languages python --splits problem --baselines '' \
        --encoders "$3" --first-seed "$4" --device "$DEVICE" --max-seconds "$FINETUNE_S" --samples "$SAMPLES" \
        --json "$R/$1.json" > "$R/$1.log" 2>&1
    say "done $1 (exit $?)"
}

encoder() {  # name flags...: pretrain one encoder, then ship it in fp16 (the GPU machine returns files <= 16 MiB)
    local name=$1
    shift
    "$PY" -m coderlm.cli pretrain --data "$DATA/corpus.jsonl.gz" --out "$WORK/enc-$name" --device "$DEVICE" \
        --precision bf16 --batch-size 128 --learning-rate 1e-3 --steps 1000000 --max-seconds "$PRETRAIN_S" \
        --eval-every 500 --checkpoint-every 1000000 --bpe-chars "$BPE_CHARS" --no-progress "$@" \
        > "$R/pretrain-$name.log" 2>&1
    say "pretrained $name (exit $?)"
    "$PY" - "$WORK/enc-$name" "$WORK/ship-$name" <<'EOF'
import shutil, sys
from pathlib import Path
from safetensors.torch import load_file, save_file
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
dst.mkdir(parents=True, exist_ok=True)
for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "pretrain.json", "metrics.jsonl"):
    if (src / name).is_file():
        shutil.copy(src / name, dst / name)
weights = {k: v.half().contiguous() for k, v in load_file(src / "model.safetensors").items()}
save_file(weights, dst / "model.safetensors", metadata={"format": "pt"})
EOF
    tar czf "$OUT/encoder-$name.tgz" -C "$WORK/ship-$name" .
}

say "start: $("$PY" -c 'import torch; print(torch.__version__, torch.cuda.get_device_name() if torch.cuda.is_available() else "no cuda")')"
(while sleep 20; do pack; done) &
packer=$!

# phase 1: the encoders pretrain; the scratch RLMs (they need no encoder) train beside them
# phase 2: as each encoder is ready, RLMs fine-tuned from it and from its untrained twin
finetune() {
    local name=$1 enc=$WORK/enc-$1
    [ -f "$enc/model.safetensors" ] || { say "no encoder $name: its fine-tunes skipped"; return; }
    for seed in 0 1; do
        rlm mbxp-$name-s$seed "$DATA/mbxp.jsonl" "$enc" $seed &
        rlm leetcode-$name-s$seed "$DATA/leetcode.jsonl" "$enc" $seed &
    done
    rlm mbxp-$name-untrained-s0 "$DATA/mbxp.jsonl" "untrained:$enc" 0 &
    wait
}
jobs=()
(encoder small --vocab-size 1024 --hidden-size 128 --layers 2 --heads 4 --intermediate-size 512 && finetune small) &
jobs+=($!)
(encoder base && finetune base) &
jobs+=($!)
for seed in 0 1; do
    rlm mbxp-scratch-s$seed "$DATA/mbxp.jsonl" scratch $seed &
    jobs+=($!)
    rlm leetcode-scratch-s$seed "$DATA/leetcode.jsonl" scratch $seed &
    jobs+=($!)
done
wait "${jobs[@]}"
kill $packer
pack
say "all done"
