"""Decoding throughput: queries/s at 64 samples per query, ours vs a naive decoder.

Same model (default size: d_model 256, 2+2 layers, 8 heads), same 512-token inputs,
same run. Rows:

* ``rlm``: ours. Encode once, cross-attention keys/values computed once and shared
  by all samples of an input, KV cache, automaton masks by one tensor gather per step,
  vectorized float decoding.
* ``rlm_no_cache``: ours without the KV cache (the whole prefix is re-decoded each step).
* ``rlm_exact``: no samples: the median of the model's distribution walked in one decode per query
  (``coderlm.decoding.walk``, ``predict(point="exact")``).
* ``naive``: the reference implementation's approach: memory copied per sample, no KV
  cache (cross-attention keys/values recomputed each step), masks built per sample in
  Python from the format's next-token rule, floats parsed per sample into an object array.

    python bench/decode_speed.py --json out/decode_speed.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from coderlm.decoding import sample_tokens
from coderlm.decoding.walk import walk_tokens
from coderlm.model import EncoderDecoder, Memory, ModelConfig
from coderlm.numbers import P10, NumberCodec


def naive_decode(model: EncoderDecoder, codec: NumberCodec, ids, mask, num_samples: int) -> np.ndarray:
    fmt, vocab = codec.format, codec.vocab
    states = model.encoder(ids, mask)  # encode once, as the reference does
    rows = ids.shape[0] * num_samples
    expanded = states.repeat_interleave(num_samples, 0)  # (B*S, T, D): memory copied per sample
    expanded_mask = mask.repeat_interleave(num_samples, 0)
    generated = torch.full((rows, 0), 0, dtype=torch.long)
    bos = torch.full((rows, 1), model.decoder.bos_id, dtype=torch.long)
    for _ in range(codec.total_length):
        cross = [block.cross_attn.memory_kv(expanded) for block in model.decoder.blocks]  # recomputed each step
        memory = Memory(cross, expanded_mask[:, None, None, :])
        prefix = torch.cat([bos, generated], 1)
        logits = model.decoder(prefix[:, None], memory)[:, 0, -1]  # whole prefix, no cache
        allowed = torch.zeros_like(logits)
        for i in range(rows):  # per-sample Python: walk the prefix, list the allowed next tokens
            state = fmt.start()
            for token in generated[i].tolist():
                state = fmt.step(state, vocab[token])
            for j, token in enumerate(vocab):
                if fmt.step(state, token) is not None:
                    allowed[i, j] = 1.0
        masked = (1.0 - allowed) * -1e7 + allowed * logits
        token = torch.multinomial(torch.softmax(masked, -1), 1)
        generated = torch.cat([generated, token], 1)
    out = np.empty((rows, codec.num_objectives), dtype=object)
    for i in range(rows):  # per-sample parsing into Python floats
        out[i] = codec.decode(generated[i].numpy())
    return out.reshape(ids.shape[0], num_samples, -1)


def fast_decode(model, codec, ids, mask, num_samples: int, use_cache: bool = True) -> np.ndarray:
    if use_cache:
        tokens = sample_tokens(model, codec.automaton, ids, mask, num_samples)
    else:
        tokens = sample_without_cache(model, codec, ids, mask, num_samples)
    return codec.decode(tokens)


@torch.no_grad()
def sample_without_cache(model, codec, ids, mask, num_samples: int) -> torch.Tensor:
    automaton, memory = codec.automaton, model.encode(ids, mask)
    batch = ids.shape[0]
    prefix = torch.full((batch, num_samples, 1), model.decoder.bos_id, dtype=torch.long)
    state = torch.full((batch, num_samples), automaton.start, dtype=torch.long)
    for _ in range(codec.total_length):
        logits = automaton.mask_logits(model.decoder(prefix, memory)[:, :, -1], state)
        token = torch.multinomial(torch.softmax(logits, -1).view(-1, logits.shape[-1]), 1).view(batch, num_samples)
        state = automaton.advance(state, token)
        prefix = torch.cat([prefix, token[..., None]], -1)
    return prefix[..., 1:]


def exact_median(model, codec, ids, mask) -> np.ndarray:
    """The median of the model's distribution itself, walked in one decode (``coderlm.decoding.walk``)."""
    walked, within = walk_tokens(model, codec.automaton, codec, ids, mask, torch.tensor([0.5], dtype=torch.float64))
    return codec.decode(walked, within.numpy())


def measure(fn, queries: int, seconds: float) -> tuple[float, int]:
    """Queries/s over repeated calls until ``seconds`` pass (after one warm-up call)."""
    fn()
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return calls * queries / elapsed, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=64, help="samples per query")
    parser.add_argument("--input-len", type=int, default=512, help="input tokens per query")
    parser.add_argument("--batch", type=int, default=16, help="queries decoded together")
    parser.add_argument("--objectives", type=int, default=1, help="numbers per query")
    parser.add_argument("--seconds", type=float, default=10.0, help="time spent measuring each row")
    parser.add_argument("--naive-batch", type=int, default=2, help="queries per call for the (slow) naive row")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--json", type=Path, help="write {'results': [...]} here")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    codec = NumberCodec(P10(), args.objectives)
    cfg = ModelConfig(
        input_vocab_size=4096,
        output_vocab_size=codec.vocab_size,
        output_length=codec.total_length,
        max_input_len=args.input_len,
    )
    torch.manual_seed(0)
    model = EncoderDecoder(cfg).eval()
    ids = torch.randint(2, cfg.input_vocab_size, (args.batch, args.input_len))
    mask = torch.ones_like(ids, dtype=torch.bool)
    small_ids, small_mask = ids[: args.naive_batch], mask[: args.naive_batch]

    rows = []
    with torch.inference_mode():
        for method, fn, queries in [
            ("rlm", lambda: fast_decode(model, codec, ids, mask, args.samples), args.batch),
            ("rlm_no_cache", lambda: fast_decode(model, codec, ids, mask, args.samples, False), args.batch),
            ("rlm_exact", lambda: exact_median(model, codec, ids, mask), args.batch),
            ("naive", lambda: naive_decode(model, codec, small_ids, small_mask, args.samples), args.naive_batch),
        ]:
            qps, calls = measure(fn, queries, args.seconds)
            rows.append(
                {
                    "method": method,
                    "queries_per_s": round(qps, 2),
                    "samples": 0 if method == "rlm_exact" else args.samples,
                    "input_tokens": args.input_len,
                    "batch": queries,
                    "objectives": args.objectives,
                    "threads": torch.get_num_threads(),
                    "calls": calls,
                }
            )

    base = next(r["queries_per_s"] for r in rows if r["method"] == "naive")
    print(f"{'method':<14}{'queries/s':>11}{'vs naive':>10}  (samples={args.samples}, input={args.input_len} tokens)")
    for r in rows:
        r["speedup_vs_naive"] = round(r["queries_per_s"] / base, 1)
        print(f"{r['method']:<14}{r['queries_per_s']:>11.2f}{r['speedup_vs_naive']:>9.1f}x")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"results": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
