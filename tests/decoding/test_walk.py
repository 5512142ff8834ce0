"""The quantile walk against the model's distribution enumerated in full, on formats small enough to list."""

import itertools

import numpy as np
import pytest
import torch

from coderlm.decoding.sampler import log_prob
from coderlm.decoding.walk import walk_inputs, walk_tokens
from coderlm.numbers import IEEE, P10, NumberCodec
from coderlm.text.bpe import TokenBatch
from tests.decoding.test_sampler import build

SMALL = [P10(digits=1, min_exponent=-1, max_exponent=1), P10(digits=2, min_exponent=0, max_exponent=1), IEEE(1, 1)]
LEVELS = torch.tensor([0.0, 0.03, 0.25, 0.5, 0.77, 0.97, 1.0], dtype=torch.float64)


def every_number(codec: NumberCodec) -> torch.Tensor:
    """Every sequence the automaton accepts (one objective, specials included)."""
    automaton = codec.automaton
    seqs = torch.tensor(list(itertools.product(range(codec.vocab_size), repeat=codec.length)))
    return seqs[automaton.accepts(seqs)]


def distribution(model, codec, ids, mask, seqs):
    """(values, probabilities) of input 0 over the numbers in ``seqs``, sorted by value; specials left out."""
    probs = log_prob(model, codec.automaton, ids.expand(len(seqs), -1), mask.expand(len(seqs), -1), seqs)
    probs = probs.sum(-1).exp().double().numpy()
    values = codec.decode(seqs.numpy())[:, 0]
    numeric = np.isfinite(values) & (seqs[:, 0].numpy() < len(codec.format.tokens))
    order = np.lexsort((seqs[:, 0].numpy(), values))  # -0.0 (<->) after +0.0 only matters for ties at zero
    order = order[numeric[order]]
    return values[order], probs[order] / probs[order].sum(), seqs[order]


@pytest.mark.parametrize("fmt", SMALL, ids=repr)
@pytest.mark.parametrize("specials", [(), ("nan",)])
def test_walk_is_the_exact_quantile(fmt, specials):
    """The walked number is where the enumerated CDF first reaches q, and ``within`` is q's share of it."""
    codec = NumberCodec(fmt, 1, specials)
    model = build(codec, seed=3)
    with torch.no_grad():  # spread the mass over many numbers, unevenly
        model.decoder.head.weight.mul_(4)
    ids, mask = torch.randint(1, 99, (1, 9), generator=torch.Generator().manual_seed(5)), torch.ones(1, 9, dtype=bool)
    values, probs, seqs = distribution(model, codec, ids, mask, every_number(codec))
    assert len(values) >= 20
    walked, within = walk_tokens(model, codec.automaton, codec, ids, mask, LEVELS)
    cdf = np.cumsum(probs)
    for j, q in enumerate(LEVELS.tolist()):
        k = min(int(np.searchsorted(cdf - probs, q, side="right")) - 1, len(values) - 1)
        k = max(k, 0)
        assert walked[0, j].tolist() == seqs[k].tolist(), f"q={q}"
        share = min(max((q - (cdf[k] - probs[k])) / probs[k], 0.0), 1.0)
        # float32 logits: the mass below q within the number is exact to ~1e-6 (its share, / probs[k], less so)
        assert within[0, j, 0].item() * probs[k] == pytest.approx(share * probs[k], abs=1e-5)


def test_walk_values_are_monotone_and_continuous():
    """Values rise with the level; ``within`` moves each value at most half a last-digit step off the spelled
    number; ``walk_inputs`` gives what ``walk_tokens`` walks, batch by batch, in the inputs' order."""
    codec = NumberCodec(P10(digits=2, min_exponent=-2, max_exponent=2), 2, ("nan",))
    model = build(codec, seed=1)
    ids = torch.randint(1, 99, (3, 11), generator=torch.Generator().manual_seed(2))
    mask = torch.arange(11)[None, :] < torch.tensor([11, 6, 3])[:, None]
    ids = ids.masked_fill(~mask, 0)
    walked, within = walk_tokens(model, codec.automaton, codec, ids, mask, LEVELS)
    assert codec.automaton.accepts(walked.view(-1, codec.total_length)).all()
    values = codec.decode(walked.numpy(), within.numpy())  # (3, Q, 2)
    assert np.all(np.diff(values[..., 0], axis=1) >= 0)  # the first objective: its exact marginal quantiles
    spelled = walked.numpy().reshape(3, len(LEVELS), 2, codec.length)
    assert np.all(np.abs(values - codec.decode(walked.numpy())) <= 0.5 * codec.format.unit(spelled) + 1e-12)
    assert np.any(values != codec.decode(walked.numpy()))
    tokens = TokenBatch(ids.numpy(), mask.numpy(), np.array([11, 6, 3]), truncated=0)
    batched = walk_inputs(model, codec.automaton, codec, tokens, LEVELS.numpy(), batch_size=2)
    np.testing.assert_allclose(batched, values, rtol=1e-4)  # trimmed padding: float32 noise


def test_walk_inputs_rejects_bad_levels(tiny, codec):
    with pytest.raises(ValueError, match="quantile levels"):
        walk_inputs(tiny, codec.automaton, codec, None, np.array([0.5, 1.5]))
