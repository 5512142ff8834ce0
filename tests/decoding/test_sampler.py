import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from coderlm.decoding import allowed_log_probs, log_prob, sample_tokens
from coderlm.model import EncoderDecoder
from coderlm.numbers import IEEE, P10, SPECIAL_TOKENS, NumberCodec
from tests.conftest import tiny_config


def build(codec: NumberCodec, seed: int = 0) -> EncoderDecoder:
    torch.manual_seed(seed)
    return EncoderDecoder(tiny_config(output_vocab_size=codec.vocab_size, output_length=codec.total_length)).eval()


FORMATS = [P10(), P10(digits=2, min_exponent=-3, max_exponent=5), IEEE(), IEEE(2, 3)]


@settings(max_examples=25, deadline=None)
@given(
    format_index=st.integers(0, len(FORMATS) - 1),
    objectives=st.integers(1, 3),
    specials=st.sets(st.sampled_from(sorted(SPECIAL_TOKENS))),
    temperature=st.sampled_from([0.0, 0.5, 1.0, 3.0]),
    seed=st.integers(0, 2**16),
)
def test_every_sample_parses(format_index, objectives, specials, temperature, seed):
    """Whatever the weights and temperature, each sample is a valid spelling of numbers."""
    codec = NumberCodec(FORMATS[format_index], objectives, tuple(specials))
    model = build(codec, seed)
    with torch.no_grad():  # random logits are too tame; sharpen them so rare paths get sampled
        model.decoder.head.weight.mul_(50)
    ids = torch.randint(1, 99, (2, 7))
    mask = torch.ones_like(ids, dtype=torch.bool)
    tokens = sample_tokens(model, codec.automaton, ids, mask, 16, temperature, torch.Generator().manual_seed(seed))
    assert tokens.shape == (2, 16, codec.total_length)
    assert codec.automaton.accepts(tokens).all()
    values = codec.decode(tokens)
    assert values.dtype == np.float64 and values.shape == (2, 16, objectives)
    kinds = codec.special_kinds(tokens)
    assert np.isfinite(values[kinds == ""]).all()
    assert set(np.unique(kinds)) <= {""} | set(specials)
    # the decoded numbers re-encode to exactly the sampled tokens (canonical spelling)
    flat = values.reshape(-1, objectives)
    invalid = kinds.reshape(-1, objectives) == "invalid"
    np.testing.assert_array_equal(codec.encode(flat, invalid).ids, tokens.reshape(-1, codec.total_length).numpy())


def test_greedy_is_argmax_of_allowed_logits(codec, inputs):
    model = build(codec)
    ids, mask = inputs
    greedy = sample_tokens(model, codec.automaton, ids, mask, num_samples=3, temperature=0.0)
    assert (greedy == greedy[:, :1]).all()
    first = greedy[:, 0]
    logits = model(ids, mask, first)  # teacher-forced on the greedy path
    states = codec.automaton.states_along(first)[:, :-1]
    masked = codec.automaton.mask_logits(logits, states)
    torch.testing.assert_close(masked.argmax(-1), first)


def test_seeded_sampling_is_reproducible(codec, inputs):
    model = build(codec)
    ids, mask = inputs
    a = sample_tokens(model, codec.automaton, ids, mask, 8, 1.0, torch.Generator().manual_seed(5))
    b = sample_tokens(model, codec.automaton, ids, mask, 8, 1.0, torch.Generator().manual_seed(5))
    assert torch.equal(a, b)


def all_sequences(codec: NumberCodec) -> torch.Tensor:
    """Every sequence the automaton accepts: valid single numbers, then all their combinations."""
    single = NumberCodec(codec.format, 1, codec.specials)
    ids = torch.tensor(list(itertools.product(range(single.vocab_size), repeat=single.total_length)))
    numbers = ids[single.automaton.accepts(ids)].tolist()
    combos = itertools.product(numbers, repeat=codec.num_objectives)
    combined = torch.tensor([list(itertools.chain.from_iterable(c)) for c in combos])
    assert codec.automaton.accepts(combined).all()
    return combined


def test_log_prob_is_normalized_over_valid_sequences():
    """exp(log_prob) sums to 1 over every sequence the automaton accepts."""
    codec = NumberCodec(P10(digits=1, min_exponent=-1, max_exponent=1), 2, ("nan",))
    model = build(codec)
    valid = all_sequences(codec)  # 2 * (10 + 2 * 9) + 1 = 57 per objective, squared
    assert len(valid) == 57**2
    ids = torch.randint(1, 99, (1, 6)).expand(len(valid), -1)
    mask = torch.ones_like(ids, dtype=torch.bool)
    logp = log_prob(model, codec.automaton, ids, mask, valid).sum(-1)
    assert torch.isclose(logp.exp().sum(), torch.tensor(1.0), atol=1e-4)


def test_sampling_frequencies_match_log_prob():
    codec = NumberCodec(P10(digits=1, min_exponent=0, max_exponent=1), 1)
    model = build(codec, seed=3)
    valid = all_sequences(codec)
    ids = torch.randint(1, 99, (1, 6))
    mask = torch.ones_like(ids, dtype=torch.bool)
    probs = log_prob(model, codec.automaton, ids.expand(len(valid), -1), mask.expand(len(valid), -1), valid)
    probs = probs.sum(-1).exp()
    n = 20000
    samples = sample_tokens(model, codec.automaton, ids, mask, n, 1.0, torch.Generator().manual_seed(0))[0]
    index = {tuple(v.tolist()): i for i, v in enumerate(valid)}
    counts = torch.zeros(len(valid))
    for row in samples.tolist():
        counts[index[tuple(row)]] += 1
    # every frequency within 5 standard errors of its probability
    std = (probs * (1 - probs) / n).sqrt()
    assert ((counts / n - probs).abs() <= 5 * std + 1e-3).all()


def test_allowed_log_probs_forbidden_token_is_minus_inf(codec):
    logits = torch.zeros(1, codec.total_length, codec.vocab_size)
    target = torch.from_numpy(codec.encode([[1.0, 2.0]]).ids)
    bad = target.clone()
    bad[0, 2] = codec.vocab.index("<E3>")  # an exponent where a digit must be
    good = allowed_log_probs(logits, codec.automaton, target)
    assert torch.isfinite(good).all()
    assert allowed_log_probs(logits, codec.automaton, bad)[0, 2] == float("-inf")
    # uniform logits renormalized over allowed tokens: sign is 1 of 2 (+ the NaN special) choices
    assert torch.isclose(good[0, 0], torch.tensor(-np.log(3.0), dtype=good.dtype))


@pytest.mark.parametrize("num_samples, temperature", [(0, 1.0), (4, -1.0)])
def test_bad_sampling_arguments(codec, inputs, num_samples, temperature):
    with pytest.raises(ValueError):
        sample_tokens(build(codec), codec.automaton, *inputs, num_samples, temperature)
