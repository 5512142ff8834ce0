#!/usr/bin/env bash
# The six-language LeetCode RLM at the schedule Python alone needed, on a GPU machine, in one command.
#
# Issue 19 (docs/results.md, "Programs: LeetCode in six languages" and "Python alone"): one RLM for six
# languages, 3,000 steps of 16 over 6,927 programs (~7 passes), trails GBDT on token n-grams on the mean
# over languages; Python alone gained 0.03 memory Spearman from 7 to 28 passes. This runs
# bench/programs.py on the same data and split at STEPS (default 12,000: ~28 passes) for seeds 0 and 1 side
# by side, then at 2 x STEPS for seed 0 (does it keep gaining?), then GBDT, kNN and length on the same split.
# Each RLM trains in a run folder (--runs): a command stopped at its time limit and run again continues.
#
# Prepare here (CPU), then run on the GPU machine (carry out/gpu):
#   coderlm collect programs --corpus leetcode ... --text code+inputs --out out/leetcode_ci   # docs/results.md
#   mkdir -p out/gpu && cp out/leetcode_ci/leetcode.jsonl out/leetcode_ci/leetcode.runs.jsonl out/gpu/
#   OUT=out/gpu_result bash scripts/gpu_programs.sh       # results.tgz: JSON rows, logs, learning curves
#
# results.tgz is refreshed every 20 s, so a run stopped at its time limit still returns what it finished.
set -u
DATA=${DATA:-out/gpu/leetcode.jsonl}
WORK=${WORK:-/tmp/gpu_programs}
OUT=${OUT:-out/gpu_result}
DEVICE=${DEVICE:-cuda}
STEPS=${STEPS:-12000}
SAMPLES=${SAMPLES:-128}
PY=${PYTHON:-python3}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH}
R=$WORK/results
mkdir -p "$R" "$OUT"
say() { echo "[$(date +%T)] $*" | tee -a "$R/timeline.log"; }

pack() {
    for run in "$WORK"/runs*/*/; do
        [ -f "$run/metrics.jsonl" ] && cp "$run/metrics.jsonl" "$R/$(basename "$(dirname "$run")")-$(basename "$run").metrics.jsonl"
    done
    tar czf "$OUT/results.tgz.part" -C "$R" . && mv "$OUT/results.tgz.part" "$OUT/results.tgz"
}

bench() {  # name flags...: one bench/programs.py run, split by problem, the text stating the inputs
    local name=$1
    shift
    "$PY" bench/programs.py --corpus leetcode --data "$DATA" --splits problem --number-values \
        --device "$DEVICE" --samples "$SAMPLES" --json "$R/$name.json" "$@" > "$R/$name.log" 2>&1
    say "done $name (exit $?)"
}

[ -f "$DATA" ] || { echo "$DATA: not found (see the preparation above)"; exit 2; }
say "start: $("$PY" -c 'import torch; print(torch.__version__, torch.cuda.get_device_name() if torch.cuda.is_available() else "no cuda")')"
(while sleep 20; do pack; done) &
packer=$!
jobs=()
for seed in 0 1; do
    bench "rlm-$STEPS-s$seed" --baselines '' --steps "$STEPS" --first-seed $seed --runs "$WORK/runs-$STEPS" &
    jobs+=($!)
done
wait "${jobs[@]}"
bench "rlm-$((2 * STEPS))-s0" --baselines '' --steps $((2 * STEPS)) --runs "$WORK/runs-$((2 * STEPS))" &
jobs=($!)
bench baselines --encoders '' --baselines gbdt,knn,length &
jobs+=($!)
wait "${jobs[@]}"
kill $packer
pack
say "all done"
