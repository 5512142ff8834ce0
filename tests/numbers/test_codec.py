"""The multi-objective NumberCodec: layout, special values, errors, counts and persistence."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from coderlm.numbers import IEEE, P10, SPECIAL_TOKENS, EncodedTargets, NumberCodec

ALL_SPECIALS = ("nan", "+inf", "-inf", "invalid")


def _format_ids(codec: NumberCodec, value: float) -> list[int]:
    return codec.format.token_ids(codec.format.encode(value).tokens)


def _special_ids(codec: NumberCodec, name: str) -> list[int]:
    return [codec.vocab.index(SPECIAL_TOKENS[name])] * codec.length


# -------------------------------------------------------------------------------------- vocabulary
def test_vocab_is_format_tokens_then_specials_in_canonical_order() -> None:
    codec = NumberCodec(P10(), specials=("invalid", "nan", "-inf"))
    assert codec.specials == ("nan", "-inf", "invalid")
    assert codec.vocab == (*P10().tokens, "<NaN>", "<-Inf>", "<Invalid>")
    assert codec.vocab_size == len(P10().tokens) + 3
    assert NumberCodec(IEEE()).vocab == IEEE().tokens


def test_lengths() -> None:
    codec = NumberCodec(IEEE(2, 3), num_objectives=3)
    assert codec.length == 7
    assert codec.total_length == 21


def test_default_codec() -> None:
    codec = NumberCodec()
    assert codec.format == P10()
    assert codec.num_objectives == 1
    assert codec.specials == ()


@pytest.mark.parametrize("k", [0, -1])
def test_rejects_bad_num_objectives(k: int) -> None:
    with pytest.raises(ValueError, match="num_objectives"):
        NumberCodec(num_objectives=k)


def test_rejects_unknown_special() -> None:
    with pytest.raises(ValueError, match="unknown special"):
        NumberCodec(specials=("nan", "NaN"))


def test_ids_to_tokens() -> None:
    codec = NumberCodec(P10(), specials=("nan",))
    ids = codec.encode([[72.5]]).ids[0]
    assert codec.ids_to_tokens(ids) == ["<+>", "<E-2>", "<7>", "<2>", "<5>", "<0>"]
    assert codec.ids_to_tokens(codec.encode([[math.nan]]).ids[0]) == ["<NaN>"] * 6


# ------------------------------------------------------------------------------------------ layout
@pytest.mark.parametrize("fmt", [P10(), IEEE(), IEEE(2, 3), P10(digits=2, min_exponent=-2, max_exponent=2)])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_encode_decode_shapes_and_layout(fmt, k: int) -> None:
    codec = NumberCodec(fmt, num_objectives=k)
    rng = np.random.default_rng(k)
    values = rng.choice([-1.0, 1.0], size=(5, k)) * rng.uniform(1.0, 99.0, size=(5, k))
    encoded = codec.encode(values)
    assert isinstance(encoded, EncodedTargets)
    assert encoded.ids.shape == (5, k * fmt.length)
    assert encoded.ids.dtype == np.int64
    L = fmt.length
    for row in range(5):
        for j in range(k):
            # objective j occupies tokens [j * L, (j + 1) * L)
            assert list(encoded.ids[row, j * L : (j + 1) * L]) == _format_ids(codec, values[row, j])
    decoded = codec.decode(encoded.ids)
    assert decoded.shape == (5, k)
    assert decoded.dtype == np.float64
    expected = fmt.decode(encoded.ids.reshape(5, k, L))
    np.testing.assert_array_equal(decoded, expected)
    digits = fmt.digits if isinstance(fmt, P10) else fmt.mantissa_digits
    np.testing.assert_allclose(decoded, values, rtol=0.5 * 10.0 ** (1 - digits) + 1e-12)


def test_one_dimensional_targets_for_one_objective() -> None:
    codec = NumberCodec(P10())
    a = codec.encode(np.array([1.0, 2.0, 3.0]))
    b = codec.encode(np.array([[1.0], [2.0], [3.0]]))
    assert a.ids.shape == (3, 6)
    np.testing.assert_array_equal(a.ids, b.ids)


def test_encode_accepts_lists() -> None:
    codec = NumberCodec(P10(), num_objectives=2)
    ids = codec.encode([[1.0, 2.0]]).ids
    assert ids.shape == (1, 12)
    np.testing.assert_array_equal(codec.decode(ids), [[1.0, 2.0]])


def test_encode_empty_batch() -> None:
    codec = NumberCodec(P10(), num_objectives=2)
    encoded = codec.encode(np.zeros((0, 2)))
    assert encoded.ids.shape == (0, 12)
    assert (encoded.overflow, encoded.underflow) == (0, 0)
    out = codec.decode(encoded.ids)
    assert out.shape == (0, 2)
    assert out.dtype == np.float64


def test_decode_leading_axes() -> None:
    codec = NumberCodec(IEEE(), num_objectives=2, specials=("nan",))
    values = np.array([[1.5, math.nan], [-2.0, 3e-5], [0.0, 7.0], [math.nan, math.nan]])
    ids = codec.encode(values).ids.reshape(2, 2, 14)
    out = codec.decode(ids)
    assert out.shape == (2, 2, 2)
    np.testing.assert_array_equal(out.reshape(4, 2), values)
    single = codec.decode(codec.encode(values).ids[1])
    assert single.shape == (2,)
    np.testing.assert_array_equal(single, [-2.0, 3e-5])


# ---------------------------------------------------------------------------------------- specials
@pytest.mark.parametrize("fmt", [P10(), IEEE(2, 4)])
def test_special_values_encode_to_repeated_tokens_and_decode(fmt) -> None:
    codec = NumberCodec(fmt, num_objectives=2, specials=ALL_SPECIALS)
    values = np.array([[math.nan, 1.25], [math.inf, -math.inf], [3.0, 4.0], [-0.0, math.nan]])
    invalid = np.array([[False, False], [False, False], [True, False], [False, True]])
    encoded = codec.encode(values, invalid=invalid)
    L = codec.length
    ids = encoded.ids
    assert list(ids[0, :L]) == _special_ids(codec, "nan")
    assert list(ids[0, L:]) == _format_ids(codec, 1.25)
    assert list(ids[1, :L]) == _special_ids(codec, "+inf")
    assert list(ids[1, L:]) == _special_ids(codec, "-inf")
    assert list(ids[2, :L]) == _special_ids(codec, "invalid")  # the mask wins over a finite value
    assert list(ids[2, L:]) == _format_ids(codec, 4.0)
    assert list(ids[3, :L]) == _format_ids(codec, -0.0)
    assert list(ids[3, L:]) == _special_ids(codec, "invalid")  # ... and over NaN
    out = codec.decode(ids)
    assert out.dtype == np.float64
    assert math.isnan(out[0, 0]) and out[0, 1] == 1.25
    assert out[1, 0] == math.inf and out[1, 1] == -math.inf
    assert math.isnan(out[2, 0]) and out[2, 1] == 4.0
    assert out[3, 0] == 0.0 and math.copysign(1.0, out[3, 0]) == -1.0
    assert math.isnan(out[3, 1])
    kinds = codec.special_kinds(ids)
    assert kinds.shape == (4, 2)
    assert kinds.dtype.kind == "U"
    assert kinds.tolist() == [["nan", ""], ["+inf", "-inf"], ["invalid", ""], ["", "invalid"]]
    assert codec.automaton.accepts(torch.from_numpy(ids)).all()


def test_special_kinds_without_specials() -> None:
    codec = NumberCodec(P10(), num_objectives=3)
    kinds = codec.special_kinds(codec.encode([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).ids)
    assert kinds.shape == (2, 3)
    assert kinds.tolist() == [["", "", ""], ["", "", ""]]


def test_special_kinds_accepts_torch() -> None:
    codec = NumberCodec(IEEE(), num_objectives=2, specials=("-inf", "nan"))
    ids = codec.encode([[-math.inf, 2.0]]).ids
    assert codec.special_kinds(torch.from_numpy(ids)).tolist() == [["-inf", ""]]


@pytest.mark.parametrize(
    ("specials", "value", "name"),
    [
        ((), math.nan, "nan"),
        (("+inf", "-inf", "invalid"), math.nan, "nan"),
        (("nan", "-inf"), math.inf, "+inf"),
        (("nan", "+inf"), -math.inf, "-inf"),
    ],
)
def test_non_finite_without_special_token_names_row_and_objective(specials, value, name) -> None:
    codec = NumberCodec(P10(), num_objectives=3, specials=specials)
    values = np.ones((4, 3))
    values[2, 1] = value
    with pytest.raises(ValueError) as excinfo:
        codec.encode(values)
    message = str(excinfo.value)
    assert "row 2" in message
    assert "objective 1" in message
    assert repr(name) in message


def test_invalid_mask_requires_invalid_special() -> None:
    codec = NumberCodec(P10(), specials=("nan",))
    with pytest.raises(ValueError, match="invalid"):
        codec.encode([[1.0]], invalid=[[True]])
    # an all-False mask is fine
    assert codec.encode([[1.0]], invalid=[[False]]).ids.shape == (1, 6)


def test_invalid_mask_must_match_shape() -> None:
    codec = NumberCodec(P10(), num_objectives=2, specials=("invalid",))
    with pytest.raises(ValueError, match="shape"):
        codec.encode(np.ones((3, 2)), invalid=np.zeros((3, 1), bool))
    with pytest.raises(ValueError, match="shape"):
        codec.encode(np.ones((3, 2)), invalid=np.zeros((2, 2), bool))


@pytest.mark.parametrize(
    ("k", "values"),
    [
        (2, np.ones(3)),
        (2, np.ones((3, 3))),
        (1, np.ones((3, 2))),
        (1, np.ones((2, 1, 1))),
        (2, np.ones((2, 2, 1))),
        (1, np.float64(1.0)),
    ],
)
def test_wrong_target_shapes(k: int, values) -> None:
    codec = NumberCodec(P10(), num_objectives=k)
    with pytest.raises(ValueError, match="shape"):
        codec.encode(values)


# ------------------------------------------------------------------------------------------ counts
def test_overflow_and_underflow_counts() -> None:
    codec = NumberCodec(P10(), num_objectives=2, specials=("nan", "+inf"))
    values = np.array([[1e20, 1e-20], [-1e20, 0.0], [math.nan, -0.0], [math.inf, -1e-30], [5.0, 2e14]])
    encoded = codec.encode(values)
    assert encoded.overflow == 3  # 1e20, -1e20, 2e14; inf is a special value, not an overflow
    assert encoded.underflow == 2  # 1e-20, -1e-30; exact zeros are not underflow
    out = codec.decode(encoded.ids)
    np.testing.assert_array_equal(out[[0, 1, 4], :], [[9.999e13, 0.0], [-9.999e13, 0.0], [5.0, 9.999e13]])
    assert math.copysign(1.0, out[3, 1]) == -1.0


def test_counts_are_zero_for_representable_values() -> None:
    codec = NumberCodec(IEEE(), num_objectives=1)
    encoded = codec.encode(np.array([1.0, -2.5, 1e-9, 9.999e9, 0.0]))
    assert (encoded.overflow, encoded.underflow) == (0, 0)


def test_invalid_rows_do_not_count() -> None:
    codec = NumberCodec(P10(), specials=("invalid",))
    encoded = codec.encode([[1e30], [1e-30]], invalid=[[True], [True]])
    assert (encoded.overflow, encoded.underflow) == (0, 0)


# ---------------------------------------------------------------------------------------- decoding
def test_decode_accepts_torch_tensors() -> None:
    codec = NumberCodec(P10(), num_objectives=2, specials=("nan", "invalid"))
    values = np.array([[0.57, math.nan], [-12345.0, 3.0]])
    ids = codec.encode(values, invalid=[[False, False], [False, True]]).ids
    from_numpy = codec.decode(ids)
    from_torch = codec.decode(torch.from_numpy(ids))
    from_int32 = codec.decode(torch.from_numpy(ids).to(torch.int32))
    for out in (from_numpy, from_torch, from_int32):
        assert isinstance(out, np.ndarray)
        assert out.dtype == np.float64
        np.testing.assert_array_equal(out, [[0.57, math.nan], [-12340.0, math.nan]])


@pytest.mark.parametrize("specials", [(), ALL_SPECIALS])
def test_decode_dtype_is_float64_never_object(specials) -> None:
    codec = NumberCodec(IEEE(), num_objectives=2, specials=specials)
    ids = codec.encode([[1.0, 2.0], [3.0, 4.0]]).ids
    for source in (ids, ids.tolist(), ids.astype(np.int32), ids.astype(np.uint8), ids.astype(object)):
        out = codec.decode(source)
        assert out.dtype == np.float64
        np.testing.assert_array_equal(out, [[1.0, 2.0], [3.0, 4.0]])
    if specials:
        all_special = np.array([_special_ids(codec, "nan") + _special_ids(codec, "-inf")])
        out = codec.decode(all_special)
        assert out.dtype == np.float64
        assert math.isnan(out[0, 0]) and out[0, 1] == -math.inf


def test_decode_malformed_special_placement() -> None:
    # a special token away from an objective's first position is never generated (the automaton
    # forbids it); decode must still return plain float64 rather than fail
    codec = NumberCodec(P10(), specials=("nan",))
    ids = np.array(codec.encode([[1.0]]).ids)
    ids[0, 3] = codec.vocab.index("<NaN>")
    out = codec.decode(ids)
    assert out.shape == (1, 1) and out.dtype == np.float64
    assert not codec.automaton.accepts(torch.from_numpy(ids)).any()
    half = np.array([[codec.vocab.index("<NaN>")] * 3 + codec.encode([[1.0]]).ids[0, 3:].tolist()])
    assert codec.decode(half).dtype == np.float64
    assert not codec.automaton.accepts(torch.from_numpy(half)).any()


# ------------------------------------------------------------------------------------- persistence
@pytest.mark.parametrize(
    "codec",
    [
        NumberCodec(),
        NumberCodec(P10(digits=3, min_exponent=-5, max_exponent=5), num_objectives=2, specials=("nan",)),
        NumberCodec(IEEE(2, 4), num_objectives=3, specials=ALL_SPECIALS),
        NumberCodec(IEEE(), specials=("invalid", "+inf")),
    ],
)
def test_to_dict_from_dict_round_trip(codec: NumberCodec) -> None:
    spec = codec.to_dict()
    rebuilt = NumberCodec.from_dict(spec)
    assert rebuilt == codec
    assert rebuilt.to_dict() == spec
    assert rebuilt.vocab == codec.vocab
    assert torch.equal(rebuilt.automaton.transitions, codec.automaton.transitions)


def test_to_dict_contents() -> None:
    codec = NumberCodec(IEEE(2, 3), num_objectives=2, specials=("invalid", "nan"))
    assert codec.to_dict() == {
        "format": {"kind": "ieee", "exponent_digits": 2, "mantissa_digits": 3},
        "num_objectives": 2,
        "specials": ["nan", "invalid"],
    }


def test_from_dict_defaults_and_errors() -> None:
    assert NumberCodec.from_dict({"format": {"kind": "p10"}}) == NumberCodec()
    with pytest.raises(ValueError, match="unknown"):
        NumberCodec.from_dict({"format": {"kind": "p10"}, "objectives": 2})
    with pytest.raises(ValueError):
        NumberCodec.from_dict({"format": {"kind": "p11"}})
    with pytest.raises(ValueError):
        NumberCodec.from_dict({"format": {"kind": "p10"}, "specials": ["nan", "bogus"]})
    with pytest.raises(ValueError):
        NumberCodec.from_dict({"format": {"kind": "p10"}, "num_objectives": 0})
