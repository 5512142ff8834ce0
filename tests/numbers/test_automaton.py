"""The decoding automaton: exhaustive canonicality, random walks, and the tensor API."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from coderlm.numbers import IEEE, P10, SPECIAL_TOKENS, Automaton, NumberCodec, compile_automaton

ALL_SPECIALS = tuple(SPECIAL_TOKENS)


def _all_sequences(vocab_size: int, length: int) -> np.ndarray:
    """Every id sequence of ``length`` over ``vocab_size`` tokens, in itertools.product order."""
    flat = itertools.chain.from_iterable(itertools.product(range(vocab_size), repeat=length))
    return np.fromiter(flat, dtype=np.int64, count=vocab_size**length * length).reshape(-1, length)


def _canonical(codec: NumberCodec, ids: np.ndarray) -> np.ndarray:
    """Whether each row equals ``codec.encode`` of its own decoded values (specials included).

    Rows are grouped by (decoded bits, special kind) so each distinct value is encoded once.
    """
    values = codec.decode(ids)
    kinds = codec.special_kinds(ids)
    kind_codes = np.searchsorted(np.array(sorted({"", *ALL_SPECIALS})), kinds)
    keys = np.concatenate([values.view(np.int64), kind_codes], axis=-1)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    encoded = codec.encode(values[first], invalid=kinds[first] == "invalid").ids
    return (encoded[inverse.reshape(-1)] == ids).all(axis=-1)


def _accepts(codec: NumberCodec, ids: np.ndarray, chunk: int = 1 << 17) -> np.ndarray:
    automaton = codec.automaton
    starts = range(0, len(ids), chunk)
    return np.concatenate([automaton.accepts(torch.from_numpy(ids[i : i + chunk])).numpy() for i in starts])


def _check_accepts_iff_canonical(codec: NumberCodec, ids: np.ndarray) -> np.ndarray:
    accepted = _accepts(codec, ids)
    canonical = _canonical(codec, ids)
    wrong = np.flatnonzero(accepted != canonical)
    if wrong.size:
        row = ids[wrong[0]]
        pytest.fail(
            f"{wrong.size} sequences disagree, e.g. {codec.ids_to_tokens(row)}: "
            f"accepted={accepted[wrong[0]]}, canonical={canonical[wrong[0]]}, decoded={codec.decode(row)}"
        )
    assert canonical.any()
    return accepted


def test_all_sequences_matches_itertools_product() -> None:
    assert _all_sequences(3, 2).tolist() == [list(p) for p in itertools.product(range(3), repeat=2)]


# ---------------------------------------------------------------- (1) exhaustive, one objective
SINGLE = [  # (codec, number of accepted sequences)
    # P10(2, -2..2): per sign, 100 mantissas at the smallest exponent and 90 normalized at each other one
    (NumberCodec(P10(digits=2, min_exponent=-2, max_exponent=2)), 2 * (100 + 4 * 90)),
    (
        NumberCodec(P10(digits=2, min_exponent=-2, max_exponent=2), specials=ALL_SPECIALS),
        2 * (100 + 4 * 90) + 4,
    ),
    (NumberCodec(P10(digits=1, min_exponent=0, max_exponent=0), specials=("nan", "invalid")), 2 * 10 + 2),
    (NumberCodec(P10(digits=2, min_exponent=1, max_exponent=3)), 2 * (100 + 2 * 90)),
    # IEEE(1, 2): 19 exponents (+0..+9, -1..-9); 100 mantissas at -9 and 90 at each other one
    (NumberCodec(IEEE(1, 2)), 2 * (100 + 18 * 90)),
    (NumberCodec(IEEE(1, 2), specials=("+inf",)), 2 * (100 + 18 * 90) + 1),
    (NumberCodec(IEEE(1, 1), specials=ALL_SPECIALS), 2 * (10 + 18 * 9) + 4),
    # IEEE(2, 1): 199 exponents (+00..+99, -01..-99)
    (NumberCodec(IEEE(2, 1)), 2 * (10 + 198 * 9)),
]


@pytest.mark.parametrize(("codec", "count"), SINGLE, ids=[f"{c.format}-{c.specials}" for c, _ in SINGLE])
def test_exhaustive_single_objective(codec: NumberCodec, count: int) -> None:
    ids = _all_sequences(codec.vocab_size, codec.total_length)
    assert len(ids) < 400_000
    accepted = _check_accepts_iff_canonical(codec, ids)
    assert int(accepted.sum()) == count


# ---------------------------------------------------------------- (1) exhaustive, two objectives
DOUBLE = [
    NumberCodec(P10(digits=1, min_exponent=0, max_exponent=1), num_objectives=2),
    NumberCodec(P10(digits=1, min_exponent=0, max_exponent=0), 2, specials=("nan", "-inf", "invalid")),
    NumberCodec(IEEE(1, 1), num_objectives=2, specials=("nan",)),
]


@pytest.mark.parametrize("codec", DOUBLE, ids=lambda c: f"{c.format}-{c.specials}")
def test_exhaustive_two_objectives(codec: NumberCodec) -> None:
    """All (s1, s2) with one side accepted, plus: every s1 leads to one shared state or to -1.

    The second part makes the check complete: since every canonical first objective leaves the
    automaton in the same state S and every other one in -1, acceptance of (s1, s2) is
    canonical(s1) and accepted-from-S(s2), and the slices below enumerate all s2 from S.
    """
    L = codec.length
    single_codec = NumberCodec(codec.format, specials=codec.specials)
    singles = _all_sequences(codec.vocab_size, L)
    single_ok = _canonical(single_codec, singles)

    states = codec.automaton.states_along(torch.from_numpy(singles))[:, -1].numpy()
    assert (states[~single_ok] == -1).all()
    shared = np.unique(states[single_ok])
    assert shared.size == 1
    assert shared[0] not in (-1, codec.automaton.final, codec.automaton.start)

    accepted_singles = singles[single_ok]
    is_special = accepted_singles[:, 0] >= len(codec.format.tokens)
    spread = np.linspace(0, len(accepted_singles) - 1, 4).astype(int)
    picks = np.unique(np.concatenate([accepted_singles[spread], accepted_singles[is_special]]), axis=0)
    n, m = len(singles), len(picks)
    left = np.concatenate([np.repeat(picks, n, axis=0), np.tile(singles, (m, 1))], axis=1)  # every s2
    right = np.concatenate([np.tile(singles, (m, 1)), np.repeat(picks, n, axis=0)], axis=1)  # every s1
    ids = np.concatenate([left, right])
    assert ids.shape[1] == 2 * L and len(ids) < 400_000
    _check_accepts_iff_canonical(codec, ids)


# ------------------------------------------------------------------- (2) every encoding is accepted
def _sample_values(rng: np.random.Generator, n: int) -> np.ndarray:
    magnitudes = 10.0 ** rng.uniform(-320, 308, n)
    magnitudes[: n // 2] = 10.0 ** rng.uniform(-15, 16, n // 2)
    values = magnitudes * rng.choice([-1.0, 1.0], n)
    values[:8] = [0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 1.7976931348623157e308, 0.57]
    return values


ENCODE_CODECS = [
    NumberCodec(),
    NumberCodec(P10(digits=2, min_exponent=-2, max_exponent=2), num_objectives=2, specials=ALL_SPECIALS),
    NumberCodec(P10(digits=6, min_exponent=-20, max_exponent=5), num_objectives=3, specials=("nan",)),
    NumberCodec(IEEE(), num_objectives=2),
    NumberCodec(IEEE(2, 4), num_objectives=3, specials=ALL_SPECIALS),
    NumberCodec(IEEE(1, 2), specials=("invalid", "-inf")),
]


@pytest.mark.parametrize("codec", ENCODE_CODECS, ids=lambda c: f"{c.format}-{c.num_objectives}-{c.specials}")
def test_every_encoding_is_accepted(codec: NumberCodec) -> None:
    rng = np.random.default_rng(0)
    k = codec.num_objectives
    values = _sample_values(rng, 600 * k).reshape(-1, k)
    invalid = np.zeros(values.shape, bool)
    for name, value in (("nan", math.nan), ("+inf", math.inf), ("-inf", -math.inf)):
        if name in codec.specials:
            values[rng.random(values.shape) < 0.05] = value
    if "invalid" in codec.specials:
        invalid = rng.random(values.shape) < 0.05
    ids = codec.encode(values, invalid=invalid).ids
    assert codec.automaton.accepts(torch.from_numpy(ids)).all()
    assert (_canonical(codec, ids)).all()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=2, max_size=2))
def test_every_encoding_is_accepted_hypothesis(pair: list[float]) -> None:
    for codec in (ENCODE_CODECS[1], ENCODE_CODECS[3]):
        values = np.array([pair])
        if not codec.specials:
            values = np.nan_to_num(values, nan=0.0, posinf=1e300, neginf=-1e300)
        assert codec.automaton.accepts(torch.from_numpy(codec.encode(values).ids)).all()


# -------------------------------------------------------------------------------- (3) random walks
WALK_CODECS = [
    NumberCodec(),
    NumberCodec(P10(digits=3, min_exponent=-5, max_exponent=5), num_objectives=2, specials=ALL_SPECIALS),
    NumberCodec(P10(digits=1, min_exponent=0, max_exponent=0), num_objectives=3, specials=("nan",)),
    NumberCodec(IEEE(), num_objectives=2, specials=("+inf", "-inf")),
    NumberCodec(IEEE(2, 4), num_objectives=3, specials=ALL_SPECIALS),
    NumberCodec(IEEE(1, 2), num_objectives=2),
]


@settings(max_examples=300, deadline=None)
@given(index=st.integers(0, len(WALK_CODECS) - 1), rnd=st.randoms(use_true_random=False))
def test_random_walks_end_in_final_state(index: int, rnd) -> None:
    codec = WALK_CODECS[index]
    automaton = codec.automaton
    allowed = automaton.allowed
    state = automaton.start
    walk = []
    for _ in range(codec.total_length):
        assert state != automaton.final
        choices = torch.nonzero(allowed[state]).flatten().tolist()
        assert choices, "dead end before the number was complete"
        token = rnd.choice(choices)
        walk.append(token)
        state = int(automaton.transitions[state, token])
        assert state >= 0
    assert state == automaton.final
    assert not allowed[state].any()

    ids = np.array([walk])
    assert automaton.accepts(torch.from_numpy(ids)).item()
    values = codec.decode(ids)[0]
    kinds = codec.special_kinds(ids)[0]
    assert values.dtype == np.float64
    for value, kind in zip(values, kinds, strict=True):
        if kind == "":
            assert math.isfinite(value)
            assert abs(value) <= codec.format.max_abs
        else:
            assert kind in codec.specials
            expected = {"nan": math.nan, "invalid": math.nan, "+inf": math.inf, "-inf": -math.inf}[kind]
            assert value == expected or (math.isnan(value) and math.isnan(expected))
    # and the walk is canonical: it is what encode writes for its own decoded values
    again = codec.encode(values[None], invalid=(kinds == "invalid")[None])
    assert again.ids.tolist() == [walk]
    assert (again.overflow, again.underflow) == (0, 0)


# --------------------------------------------------------------------------------- (4) tensor API
CODEC = NumberCodec(P10(digits=2, min_exponent=-2, max_exponent=2), 2, specials=("nan", "invalid"))


def test_automaton_basics() -> None:
    automaton = CODEC.automaton
    assert isinstance(automaton, Automaton)
    assert automaton.transitions.dtype == torch.long
    assert automaton.transitions.shape == (automaton.num_states, CODEC.vocab_size)
    assert automaton.allowed.dtype == torch.bool
    assert torch.equal(automaton.allowed, automaton.transitions >= 0)
    assert automaton.start == 0
    assert 0 <= automaton.final < automaton.num_states
    assert (automaton.transitions >= -1).all()
    assert (automaton.transitions < automaton.num_states).all()
    assert not automaton.allowed[automaton.final].any()
    moved = automaton.to("cpu")
    assert torch.equal(moved.transitions, automaton.transitions)
    assert (moved.start, moved.final) == (automaton.start, automaton.final)
    assert CODEC.automaton is automaton  # compiled once


def test_start_state_allows_signs_and_specials_only() -> None:
    automaton = CODEC.automaton
    allowed = {CODEC.vocab[i] for i in torch.nonzero(automaton.allowed[automaton.start]).flatten().tolist()}
    assert allowed == {"<+>", "<->", "<NaN>", "<Invalid>"}


def test_mask_logits_puts_minus_inf_exactly_on_forbidden_tokens() -> None:
    automaton = CODEC.automaton
    generator = torch.Generator().manual_seed(0)
    states = torch.arange(automaton.num_states)
    logits = torch.randn(automaton.num_states, CODEC.vocab_size, generator=generator)
    masked = automaton.mask_logits(logits, states)
    assert masked.shape == logits.shape
    forbidden = automaton.transitions[states] < 0
    assert torch.isneginf(masked[forbidden]).all()
    assert torch.equal(masked[~forbidden], logits[~forbidden])
    assert torch.equal(torch.isneginf(masked), forbidden)
    assert not torch.isneginf(logits).any()  # not in place

    # extra leading axes, repeated states
    batch_states = torch.randint(0, automaton.num_states, (3, 5), generator=generator)
    batch_logits = torch.randn(3, 5, CODEC.vocab_size, generator=generator)
    batch_masked = automaton.mask_logits(batch_logits, batch_states)
    assert batch_masked.shape == (3, 5, CODEC.vocab_size)
    for i in range(3):
        for j in range(5):
            row_forbidden = ~automaton.allowed[batch_states[i, j]]
            assert torch.equal(torch.isneginf(batch_masked[i, j]), row_forbidden)
            assert torch.equal(batch_masked[i, j][~row_forbidden], batch_logits[i, j][~row_forbidden])


def test_masked_sampling_is_always_accepted() -> None:
    automaton = CODEC.automaton
    generator = torch.Generator().manual_seed(1)
    batch = 256
    state = torch.full((batch,), automaton.start, dtype=torch.long)
    tokens = []
    for _ in range(CODEC.total_length):
        logits = automaton.mask_logits(torch.randn(batch, CODEC.vocab_size, generator=generator), state)
        token = torch.multinomial(torch.softmax(logits, -1), 1, generator=generator).squeeze(-1)
        tokens.append(token)
        state = automaton.advance(state, token)
        assert (state >= 0).all()
    assert (state == automaton.final).all()
    ids = torch.stack(tokens, -1)
    assert automaton.accepts(ids).all()
    assert _canonical(CODEC, ids.numpy()).all()


def test_advance() -> None:
    automaton = CODEC.automaton
    states = torch.arange(automaton.num_states).repeat_interleave(CODEC.vocab_size)
    tokens = torch.arange(CODEC.vocab_size).repeat(automaton.num_states)
    nxt = automaton.advance(states, tokens)
    assert torch.equal(nxt, automaton.transitions.flatten())
    plus, nan = CODEC.vocab.index("<+>"), CODEC.vocab.index("<NaN>")
    start = torch.tensor([automaton.start, automaton.start])
    after = automaton.advance(start, torch.tensor([plus, nan]))
    assert (after >= 0).all() and after[0] != after[1]
    digit = CODEC.vocab.index("<3>")
    assert automaton.advance(torch.tensor([automaton.start]), torch.tensor([digit])).item() == -1


def test_states_along_and_accepts() -> None:
    automaton = CODEC.automaton
    good = torch.from_numpy(CODEC.encode([[1.5, math.nan], [-0.0, 42.0]]).ids)
    states = automaton.states_along(good)
    assert states.shape == (2, CODEC.total_length + 1)
    assert (states[:, 0] == automaton.start).all()
    assert (states[:, -1] == automaton.final).all()
    assert (states[:, :-1] != automaton.final).all()
    # the states are the ones advance walks through
    for t in range(CODEC.total_length):
        assert torch.equal(states[:, t + 1], automaton.advance(states[:, t], good[:, t]))
    assert automaton.accepts(good).tolist() == [True, True]

    # a forbidden token: -1 from there on, even if later tokens would be fine from the start state
    bad = good.clone()
    bad[0, 2] = CODEC.vocab.index("<0>")  # leading zero at a non-minimal exponent (1.5 is <+><E-1><1><5>)
    bad[1, 0] = CODEC.vocab.index("<5>")  # a digit where the sign goes
    bad_states = automaton.states_along(bad)
    assert (bad_states[0, :3] >= 0).all() and (bad_states[0, 3:] == -1).all()
    assert (bad_states[1, 1:] == -1).all()
    assert automaton.accepts(bad).tolist() == [False, False]

    # too short: not final; leading axes
    assert automaton.accepts(good[:, :-1]).tolist() == [False, False]
    stacked = torch.stack([good, bad])
    assert automaton.states_along(stacked).shape == (2, 2, CODEC.total_length + 1)
    assert automaton.accepts(stacked).tolist() == [[True, True], [False, False]]
    too_long = torch.cat([good, good[:, :1]], dim=1)
    assert automaton.accepts(too_long).tolist() == [False, False]


# ------------------------------------------------------------------------------- compile_automaton
def test_compile_small_automaton() -> None:
    # "ab" then "c": a tiny language {"ac", "bc"}
    def step(state, token):
        if state == "s" and token in "ab":
            return "mid"
        if state == "mid" and token == "c":
            return "end"
        return None

    automaton = compile_automaton(("a", "b", "c"), "s", step, lambda s: s == "end")
    assert automaton.transitions.tolist() == [[1, 1, -1], [-1, -1, 2], [-1, -1, -1]]
    assert (automaton.start, automaton.final, automaton.num_states) == (0, 2, 3)
    ids = torch.tensor([[0, 2], [1, 2], [2, 2], [0, 0]])
    assert automaton.accepts(ids).tolist() == [True, True, False, False]


def test_compile_rejects_zero_final_states() -> None:
    with pytest.raises(ValueError, match="exactly one final state, found 0"):
        compile_automaton(("a",), 0, lambda s, t: (s + 1) % 3, lambda s: False)


def test_compile_rejects_two_final_states() -> None:
    def step(state, token):
        return {"a": "x", "b": "y"}[token] if state == "s" else None

    with pytest.raises(ValueError, match="exactly one final state, found 2"):
        compile_automaton(("a", "b"), "s", step, lambda s: s in ("x", "y"))


def test_compile_rejects_final_state_with_outgoing_tokens() -> None:
    with pytest.raises(ValueError, match="must not accept more tokens"):
        compile_automaton(("a",), 0, lambda s, t: s + 1 if s < 2 else None, lambda s: s == 1)


# ---------------------------------------------------------------------------- float64 limits
@pytest.mark.parametrize(
    "build",
    [lambda: IEEE(3, 1), lambda: P10(digits=1, min_exponent=0, max_exponent=400)],
    ids=["IEEE(3, 1)", "P10(1, 0..400)"],
)
def test_formats_beyond_float64_are_rejected(build) -> None:
    """A range past float64 would let the automaton accept spellings that decode to inf."""
    with pytest.raises(ValueError, match="float64"):
        build()
