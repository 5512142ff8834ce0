"""Batched constrained sampling and scoring.

Sampling encodes each input once, decodes S samples per input in lockstep with
the KV cache, and at every step masks the logits of the whole (B, S) batch with
one gather from the automaton's transition table. Every sample is therefore a
valid number sequence by construction.

Scoring (``log_prob``) renormalizes each step's distribution over the tokens the
automaton allows there, which is the distribution the sampler draws from.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from tqdm.auto import tqdm

from coderlm.model.transformer import EncoderDecoder, Memory
from coderlm.numbers.automaton import Automaton
from coderlm.text.bpe import TokenBatch


@torch.no_grad()
def sample_tokens(
    model: EncoderDecoder,
    automaton: Automaton,
    ids: torch.Tensor,
    mask: torch.Tensor,
    num_samples: int,
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Token ids (B, S, L) for inputs ids/mask (B, T). temperature 0 decodes greedily."""
    if num_samples < 1:
        raise ValueError(f"num_samples must be >= 1, got {num_samples}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    memory = model.encode(ids, mask)
    if temperature == 0:  # every sample would be the same: decode one and repeat it
        return _decode(model, automaton, memory, ids.shape[0], 1, 0.0, generator).expand(-1, num_samples, -1)
    return _decode(model, automaton, memory, ids.shape[0], num_samples, temperature, generator)


def sample_inputs(
    model: EncoderDecoder,
    automaton: Automaton,
    tokens: TokenBatch,
    num_samples: int,
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
    batch_size: int = 16,
    progress: bool = False,
) -> np.ndarray:
    """Token ids (n, S, L) for every input of ``tokens``, decoded ``batch_size`` inputs of similar length
    at a time (on the automaton's device); ``progress``: a bar on stderr counting the inputs done."""
    out = np.empty((len(tokens.lengths), num_samples, model.decoder.cfg.output_length), dtype=np.int64)
    with tqdm(total=len(out), desc="sampling", unit="input", disable=not progress, dynamic_ncols=True) as bar:
        for rows, ids, mask in tokens.by_length(batch_size, automaton.transitions.device):
            out[rows] = sample_tokens(model, automaton, ids, mask, num_samples, temperature, generator).cpu().numpy()
            bar.update(len(rows))
    return out


def _decode(
    model: EncoderDecoder,
    automaton: Automaton,
    memory: Memory,
    batch: int,
    num_samples: int,
    temperature: float,
    generator: torch.Generator | None,
) -> torch.Tensor:
    def pick(logits: torch.Tensor, t: int, out: torch.Tensor) -> torch.Tensor:
        if temperature == 0:
            return logits.argmax(-1)
        probs = torch.softmax(logits / temperature, dim=-1)
        return torch.multinomial(probs.view(-1, probs.shape[-1]), 1, generator=generator).view(batch, num_samples)

    return decode_steps(model, automaton, memory, batch, num_samples, pick)


def decode_steps(
    model: EncoderDecoder,
    automaton: Automaton,
    memory: Memory,
    batch: int,
    width: int,
    pick: Callable[[torch.Tensor, int, torch.Tensor], torch.Tensor],
) -> torch.Tensor:
    """Token ids (batch, width, L): ``width`` sequences per input decoded in lockstep with the KV cache, the
    next tokens (batch, width) chosen by ``pick(logits, t, out)`` from the allowed logits (batch, width, V)
    at step t (forbidden tokens at -inf) and the tokens chosen so far (``out[..., :t]``)."""
    decoder = model.decoder
    device = memory.mask.device
    length = decoder.cfg.output_length
    cache = decoder.new_cache(batch * width, device, memory.cross[0][0].dtype)
    token = torch.full((batch, width, 1), decoder.bos_id, dtype=torch.long, device=device)
    state = torch.full((batch, width), automaton.start, dtype=torch.long, device=device)
    out = torch.empty((batch, width, length), dtype=torch.long, device=device)
    for t in range(length):
        if t % decoder.restart_every == 0:
            token = torch.full_like(token, decoder.bos_id)  # starts the sequence (and each independent objective)
        logits = decoder(token, memory, cache)[:, :, -1].float()  # (B, W, V)
        nxt = pick(automaton.mask_logits(logits, state), t, out)
        out[:, :, t] = nxt
        state = automaton.advance(state, nxt)
        token = nxt[:, :, None]
    return out


def allowed_log_probs(logits: torch.Tensor, automaton: Automaton, targets: torch.Tensor) -> torch.Tensor:
    """Per-token log-probabilities (..., L) of targets under logits (..., L, V) renormalized
    over the tokens the automaton allows at each position; -inf for a forbidden token."""
    states = automaton.states_along(targets)[..., :-1]  # state before each token
    forbidden = (states < 0)[..., None] | (automaton.transitions[states.clamp(min=0)] < 0)
    logp = torch.log_softmax(logits.float().masked_fill(forbidden, float("-inf")), dim=-1)
    return logp.gather(-1, targets[..., None]).squeeze(-1)


@torch.no_grad()
def log_prob(
    model: EncoderDecoder, automaton: Automaton, ids: torch.Tensor, mask: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    """Per-token log-probabilities (B, L) of target token ids (B, L) given inputs (B, T)."""
    return allowed_log_probs(model(ids, mask, targets), automaton, targets)


@torch.no_grad()
def inputs_log_probs(
    model: EncoderDecoder, automaton: Automaton, tokens: TokenBatch, target_ids: torch.Tensor, k: int, batch_size: int
) -> np.ndarray:
    """Log-probabilities (n, k) of each input's target ids (n, k * L), per objective, ``batch_size`` inputs of
    similar length at a time (on the automaton's device)."""
    out = np.empty((len(tokens.lengths), k))
    for rows, ids, mask in tokens.by_length(batch_size, automaton.transitions.device):
        y = target_ids[rows].to(ids.device)
        logp = allowed_log_probs(model(ids, mask, y), automaton, y)  # (b, k * L)
        out[rows] = logp.view(len(rows), out.shape[1], -1).sum(-1).cpu().numpy()
    return out
