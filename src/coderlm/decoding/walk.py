"""Exact quantiles of the decoder's distribution, one deterministic decode per level (no sampling).

Every format spells a number most significant token first (sign, exponent, mantissa digits), so the numbers
that share a prefix are one interval of the number line, and the tokens allowed after the prefix split it
into consecutive pieces, in id order upward or downward (``NumberFormat.ascending``). The q-quantile of the
model's distribution over spelled numbers is therefore found in one pass: at each step take the token
whose cumulative probability, in the number line's order, first passes q, and carry on with q rescaled to
that token's share (``q <- (q - mass below) / p(token)``). What is left of q after the last digit is where
the quantile sits inside that last digit's step: the codec places the value there (``decode(within=)``),
so two inputs whose medians are the same spelled number still differ when their distributions do.

A 64-sample median estimates the same median with noise (its standard error is about a sixth of the
distribution's width) and ties inputs on one spelled value; the walk costs one greedy decode.

Special values (``<NaN>``, ``<Invalid>``, ...) are left out, as the sample statistics leave out NaN
samples: the walk is over the numbers; unless the NaN-valued ones hold most of an objective's mass (the
model says it does not apply to the input, as the sample statistics read most samples NaN): the walk then
writes the likeliest of them, at every level, and the objectives after it are conditioned on it. With
several objectives each is walked at its level given the ones before it as walked (their conditional
quantile, the exact marginal for the first).
"""

from __future__ import annotations

import numpy as np
import torch
from tqdm.auto import tqdm

from coderlm.decoding.sampler import decode_steps
from coderlm.model.transformer import EncoderDecoder
from coderlm.numbers.automaton import Automaton
from coderlm.numbers.codec import NumberCodec
from coderlm.text.bpe import TokenBatch


@torch.no_grad()
def walk_tokens(
    model: EncoderDecoder,
    automaton: Automaton,
    codec: NumberCodec,
    ids: torch.Tensor,
    mask: torch.Tensor,
    levels: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """For inputs ids/mask (B, T) and quantile levels (Q,) in [0, 1]: token ids (B, Q, k * L) of each
    level's quantile, and where it sits within its last digit's step (B, Q, k), in [0, 1]."""
    batch, width, length = ids.shape[0], levels.shape[0], codec.length
    device = ids.device
    memory = model.encode(ids, mask)
    numeric = torch.arange(codec.vocab_size, device=device) < len(codec.format.tokens)
    not_a_number = torch.zeros(codec.vocab_size, dtype=torch.bool, device=device)
    not_a_number[list(codec.nan_ids)] = True
    start = levels.to(device=device, dtype=torch.float64).expand(batch, width)
    q = start.clone()
    within = torch.empty((batch, width, codec.num_objectives), dtype=torch.float64, device=device)
    nan = torch.zeros((batch, width), dtype=torch.bool, device=device)  # this objective is written as NaN

    def pick(logits: torch.Tensor, t: int, out: torch.Tensor) -> torch.Tensor:
        nonlocal q, nan
        position, objective = t % length, t // length
        if position == 0:  # most of the mass on NaN-valued specials: the objective does not apply
            nan = (torch.softmax(logits.double(), dim=-1) * not_a_number).sum(-1) > 0.5
            written = logits.masked_fill(~not_a_number, float("-inf")).argmax(-1)
        else:
            written = logits.argmax(-1)  # the special's spelling goes on: one token allowed
        probs = torch.softmax(logits.double().masked_fill(~numeric, float("-inf")), dim=-1)  # (B, W, V)
        up = codec.format.ascending(out[..., t - position : t])[..., None]  # (B, W, 1)
        below = torch.where(up, probs.cumsum(-1), probs.flip(-1).cumsum(-1).flip(-1)) - probs
        # the token whose piece holds q: the last (in the number line's order) with mass below <= q
        score = torch.where((probs > 0) & (below <= q[..., None]), below, -1.0)
        nxt = score.argmax(-1)  # below is distinct for tokens with mass
        share = probs.gather(-1, nxt[..., None]).squeeze(-1)
        q = ((q - below.gather(-1, nxt[..., None]).squeeze(-1)) / share).clamp(0.0, 1.0)
        if position == length - 1:
            within[..., objective] = q
            q = start.clone()  # the next objective's level
        return torch.where(nan, written, nxt)

    out = decode_steps(model, automaton, memory, batch, width, pick)
    return out, within


def walk_inputs(
    model: EncoderDecoder,
    automaton: Automaton,
    codec: NumberCodec,
    tokens: TokenBatch,
    levels: np.ndarray,
    batch_size: int = 16,
    progress: bool = False,
) -> np.ndarray:
    """Values (n, Q, k) of the exact quantiles at ``levels`` for every input of ``tokens``, walked
    ``batch_size`` inputs of similar length at a time (on the automaton's device)."""
    levels = np.asarray(levels, dtype=np.float64).reshape(-1)
    if levels.size == 0 or np.any((levels < 0) | (levels > 1)):
        raise ValueError(f"quantile levels must be in [0, 1], got {levels.tolist()}")
    device = automaton.transitions.device
    level_tensor = torch.as_tensor(levels, device=device)
    out = np.empty((len(tokens.lengths), len(levels), codec.num_objectives))
    with tqdm(total=len(out), desc="walking", unit="input", disable=not progress, dynamic_ncols=True) as bar:
        for rows, ids, mask in tokens.by_length(batch_size, device):
            walked, within = walk_tokens(model, automaton, codec, ids, mask, level_tensor)
            out[rows] = codec.decode(walked.cpu().numpy(), within.cpu().numpy())
            bar.update(len(rows))
    return out
