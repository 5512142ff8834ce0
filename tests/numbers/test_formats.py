"""Golden tables for the P10 and IEEE number formats, plus constructor and persistence checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coderlm.numbers import IEEE, P10, Encoded, NumberFormat, format_from_dict


def _t(spec: str) -> tuple[str, ...]:
    """``"+ E-4 5 7 0 0"`` -> ``("<+>", "<E-4>", "<5>", "<7>", "<0>", "<0>")``."""
    return tuple(f"<{part}>" for part in spec.split())


def _decode(fmt: NumberFormat, tokens: tuple[str, ...]) -> float:
    return float(fmt.decode(np.array(fmt.token_ids(tokens))))


def _same_float(a: float, b: float) -> bool:
    """Equal, including the sign of zero."""
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def _check_row(fmt: NumberFormat, value: float, tokens: str, after: float, flags: str = "") -> None:
    encoded = fmt.encode(value)
    assert isinstance(encoded, Encoded)
    assert encoded.tokens == _t(tokens)
    assert len(encoded.tokens) == fmt.length
    assert encoded.overflow == ("overflow" in flags)
    assert encoded.underflow == ("underflow" in flags)
    decoded = _decode(fmt, encoded.tokens)
    assert _same_float(decoded, after), (decoded, after)


# ---------------------------------------------------------------------------------------------- P10
P10_DEFAULT_ROWS = [
    # shortest-repr decimal first: 0.57 stays 0.57, never 0.5699
    (0.57, "+ E-4 5 7 0 0", 0.57, ""),
    (72.5, "+ E-2 7 2 5 0", 72.5, ""),
    (0.1, "+ E-4 1 0 0 0", 0.1, ""),
    (0.3, "+ E-4 3 0 0 0", 0.3, ""),
    # round half to even on the decimal
    (12345.0, "+ E1 1 2 3 4", 12340.0, ""),
    (12355.0, "+ E1 1 2 3 6", 12360.0, ""),
    (12346.0, "+ E1 1 2 3 5", 12350.0, ""),
    (1.00005, "+ E-3 1 0 0 0", 1.0, ""),
    (1.0015, "+ E-3 1 0 0 2", 1.002, ""),
    (1.0025, "+ E-3 1 0 0 2", 1.002, ""),
    # carry into a new digit
    (99995.0, "+ E2 1 0 0 0", 100000.0, ""),
    (9999.5, "+ E1 1 0 0 0", 10000.0, ""),
    (0.99996, "+ E-3 1 0 0 0", 1.0, ""),
    # powers of ten
    (1.0, "+ E-3 1 0 0 0", 1.0, ""),
    (10.0, "+ E-2 1 0 0 0", 10.0, ""),
    (1e-3, "+ E-6 1 0 0 0", 1e-3, ""),
    (1e10, "+ E7 1 0 0 0", 1e10, ""),
    (1e13, "+ E10 1 0 0 0", 1e13, ""),
    # zero and negative zero
    (0.0, "+ E-10 0 0 0 0", 0.0, ""),
    (-0.0, "- E-10 0 0 0 0", -0.0, ""),
    # negative values
    (-3.14159, "- E-3 3 1 4 2", -3.142, ""),
    (-72.5, "- E-2 7 2 5 0", -72.5, ""),
    (-12345.0, "- E1 1 2 3 4", -12340.0, ""),
    (-1e-3, "- E-6 1 0 0 0", -1e-3, ""),
    # the largest magnitude, and overflow clamping to it
    (9.999e13, "+ E10 9 9 9 9", 9.999e13, ""),
    (9.9995e13, "+ E10 9 9 9 9", 9.999e13, "overflow"),
    (1e14, "+ E10 9 9 9 9", 9.999e13, "overflow"),
    (1e20, "+ E10 9 9 9 9", 9.999e13, "overflow"),
    (-1e300, "- E10 9 9 9 9", -9.999e13, "overflow"),
    (1.7976931348623157e308, "+ E10 9 9 9 9", 9.999e13, "overflow"),
    # smallest normal, gradual underflow at the smallest exponent, then flush to signed zero
    (1e-7, "+ E-10 1 0 0 0", 1e-7, ""),
    (1.234e-7, "+ E-10 1 2 3 4", 1.234e-7, ""),
    (9.9995e-8, "+ E-10 1 0 0 0", 1e-7, ""),
    (1.234e-8, "+ E-10 0 1 2 3", 1.23e-8, ""),
    (1.235e-9, "+ E-10 0 0 1 2", 1.2e-9, ""),
    (1e-10, "+ E-10 0 0 0 1", 1e-10, ""),
    (-3e-10, "- E-10 0 0 0 3", -3e-10, ""),
    (1.5e-10, "+ E-10 0 0 0 2", 2e-10, ""),
    (2.5e-10, "+ E-10 0 0 0 2", 2e-10, ""),
    (6e-11, "+ E-10 0 0 0 1", 1e-10, ""),
    (5e-11, "+ E-10 0 0 0 0", 0.0, "underflow"),
    (1e-20, "+ E-10 0 0 0 0", 0.0, "underflow"),
    (-1e-20, "- E-10 0 0 0 0", -0.0, "underflow"),
    (5e-324, "+ E-10 0 0 0 0", 0.0, "underflow"),
    (-5e-324, "- E-10 0 0 0 0", -0.0, "underflow"),
]


@pytest.mark.parametrize(("value", "tokens", "after", "flags"), P10_DEFAULT_ROWS)
def test_p10_default_golden(value: float, tokens: str, after: float, flags: str) -> None:
    _check_row(P10(), value, tokens, after, flags)


P10_OTHER_ROWS = [
    # three digits: 2.675 is 2.67499999... as a binary float, but its decimal 2.675 rounds to 2.68
    (P10(digits=3), 2.675, "+ E-2 2 6 8", 2.68, ""),
    (P10(digits=3), 2.665, "+ E-2 2 6 6", 2.66, ""),
    (P10(digits=3), 0.57, "+ E-3 5 7 0", 0.57, ""),
    (P10(digits=3), 9.995, "+ E-1 1 0 0", 10.0, ""),
    # one digit, exponents 0..3: nothing below 1, at most 9000
    (P10(digits=1, min_exponent=0, max_exponent=3), 7.0, "+ E0 7", 7.0, ""),
    (P10(digits=1, min_exponent=0, max_exponent=3), 25.0, "+ E1 2", 20.0, ""),
    (P10(digits=1, min_exponent=0, max_exponent=3), 35.0, "+ E1 4", 40.0, ""),
    (P10(digits=1, min_exponent=0, max_exponent=3), 9.5, "+ E1 1", 10.0, ""),
    (P10(digits=1, min_exponent=0, max_exponent=3), 0.6, "+ E0 1", 1.0, ""),
    (P10(digits=1, min_exponent=0, max_exponent=3), 0.5, "+ E0 0", 0.0, "underflow"),
    (P10(digits=1, min_exponent=0, max_exponent=3), -0.4, "- E0 0", -0.0, "underflow"),
    (P10(digits=1, min_exponent=0, max_exponent=3), 9000.0, "+ E3 9", 9000.0, ""),
    (P10(digits=1, min_exponent=0, max_exponent=3), 9500.0, "+ E3 9", 9000.0, "overflow"),
    (P10(digits=1, min_exponent=0, max_exponent=3), -12345.0, "- E3 9", -9000.0, "overflow"),
    # six digits, exponents -20..5
    (P10(digits=6, min_exponent=-20, max_exponent=5), 0.1, "+ E-6 1 0 0 0 0 0", 0.1, ""),
    (P10(digits=6, min_exponent=-20, max_exponent=5), 1 / 3, "+ E-6 3 3 3 3 3 3", 0.333333, ""),
    (P10(digits=6, min_exponent=-20, max_exponent=5), 123456789.0, "+ E3 1 2 3 4 5 7", 123457000.0, ""),
    (P10(digits=6, min_exponent=-20, max_exponent=5), -2.5e-20, "- E-20 0 0 0 0 0 2", -2e-20, ""),
    (P10(digits=6, min_exponent=-20, max_exponent=5), 1e-15, "+ E-20 1 0 0 0 0 0", 1e-15, ""),
    # exponents that are all positive
    (P10(digits=2, min_exponent=2, max_exponent=4), 1234.0, "+ E2 1 2", 1200.0, ""),
    (P10(digits=2, min_exponent=2, max_exponent=4), 0.0, "+ E2 0 0", 0.0, ""),
    (P10(digits=2, min_exponent=2, max_exponent=4), 49.0, "+ E2 0 0", 0.0, "underflow"),
    (P10(digits=2, min_exponent=2, max_exponent=4), 51.0, "+ E2 0 1", 100.0, ""),
]


@pytest.mark.parametrize(("fmt", "value", "tokens", "after", "flags"), P10_OTHER_ROWS)
def test_p10_other_configs_golden(fmt: P10, value: float, tokens: str, after: float, flags: str) -> None:
    _check_row(fmt, value, tokens, after, flags)


# --------------------------------------------------------------------------------------------- IEEE
IEEE_DEFAULT_ROWS = [
    (72.5, "+ + 1 7 2 5 0", 72.5, ""),
    (0.57, "+ - 1 5 7 0 0", 0.57, ""),
    (12345.0, "+ + 4 1 2 3 4", 12340.0, ""),
    (12355.0, "+ + 4 1 2 3 6", 12360.0, ""),
    (99995.0, "+ + 5 1 0 0 0", 100000.0, ""),
    (0.99996, "+ + 0 1 0 0 0", 1.0, ""),
    (1.0, "+ + 0 1 0 0 0", 1.0, ""),
    (10.0, "+ + 1 1 0 0 0", 10.0, ""),
    (1e-3, "+ - 3 1 0 0 0", 1e-3, ""),
    (1e9, "+ + 9 1 0 0 0", 1e9, ""),
    (0.0, "+ - 9 0 0 0 0", 0.0, ""),
    (-0.0, "- - 9 0 0 0 0", -0.0, ""),
    (-3.14159, "- + 0 3 1 4 2", -3.142, ""),
    (-0.0123456, "- - 2 1 2 3 5", -0.01235, ""),
    (9.999e9, "+ + 9 9 9 9 9", 9.999e9, ""),
    (1e10, "+ + 9 9 9 9 9", 9.999e9, "overflow"),
    (9.9995e9, "+ + 9 9 9 9 9", 9.999e9, "overflow"),
    (-1e300, "- + 9 9 9 9 9", -9.999e9, "overflow"),
    (1e-9, "+ - 9 1 0 0 0", 1e-9, ""),
    (1.234e-10, "+ - 9 0 1 2 3", 1.23e-10, ""),
    (1e-12, "+ - 9 0 0 0 1", 1e-12, ""),
    (2.5e-12, "+ - 9 0 0 0 2", 2e-12, ""),
    (-7e-12, "- - 9 0 0 0 7", -7e-12, ""),
    (5e-13, "+ - 9 0 0 0 0", 0.0, "underflow"),
    (-1e-20, "- - 9 0 0 0 0", -0.0, "underflow"),
]


@pytest.mark.parametrize(("value", "tokens", "after", "flags"), IEEE_DEFAULT_ROWS)
def test_ieee_default_golden(value: float, tokens: str, after: float, flags: str) -> None:
    _check_row(IEEE(), value, tokens, after, flags)


IEEE_E2_ROWS = [
    (72.5, "+ + 0 1 7 2 5 0", 72.5, ""),
    (0.57, "+ - 0 1 5 7 0 0", 0.57, ""),
    (1.0, "+ + 0 0 1 0 0 0", 1.0, ""),
    (1e10, "+ + 1 0 1 0 0 0", 1e10, ""),
    (1e-3, "+ - 0 3 1 0 0 0", 1e-3, ""),
    (12345.0, "+ + 0 4 1 2 3 4", 12340.0, ""),
    (-6.02214076e23, "- + 2 3 6 0 2 2", -6.022e23, ""),
    (0.0, "+ - 9 9 0 0 0 0", 0.0, ""),
    (-0.0, "- - 9 9 0 0 0 0", -0.0, ""),
    (9.999e99, "+ + 9 9 9 9 9 9", 9.999e99, ""),
    (1e100, "+ + 9 9 9 9 9 9", 9.999e99, "overflow"),
    (1e-99, "+ - 9 9 1 0 0 0", 1e-99, ""),
    (1.5e-102, "+ - 9 9 0 0 0 2", 2e-102, ""),
    (4e-103, "+ - 9 9 0 0 0 0", 0.0, "underflow"),
]


@pytest.mark.parametrize(("value", "tokens", "after", "flags"), IEEE_E2_ROWS)
def test_ieee_e2_golden(value: float, tokens: str, after: float, flags: str) -> None:
    _check_row(IEEE(exponent_digits=2), value, tokens, after, flags)


def test_ieee_e2_m2_golden() -> None:
    fmt = IEEE(exponent_digits=2, mantissa_digits=2)
    _check_row(fmt, 2.675, "+ + 0 0 2 7", 2.7, "")
    _check_row(fmt, 0.25, "+ - 0 1 2 5", 0.25, "")
    _check_row(fmt, 0.125, "+ - 0 1 1 2", 0.12, "")


# ------------------------------------------------------------------------------- format properties
def test_signs_of_zero_decode() -> None:
    for fmt in (P10(), IEEE(), P10(digits=2, min_exponent=2, max_exponent=4), IEEE(2, 3)):
        assert math.copysign(1.0, _decode(fmt, fmt.encode(-0.0).tokens)) == -1.0
        assert math.copysign(1.0, _decode(fmt, fmt.encode(0.0).tokens)) == 1.0
        assert math.copysign(1.0, _decode(fmt, fmt.encode(-1e-300).tokens)) == -1.0


@pytest.mark.parametrize(
    ("fmt", "length", "vocab_size", "max_abs"),
    [
        (P10(), 6, 2 + 10 + 21, 9.999e13),
        (P10(digits=2, min_exponent=-2, max_exponent=2), 4, 2 + 10 + 5, 9.9e3),
        (P10(digits=1, min_exponent=0, max_exponent=3), 3, 2 + 10 + 4, 9000.0),
        (IEEE(), 7, 12, 9.999e9),
        (IEEE(2, 4), 8, 12, 9.999e99),
        (IEEE(1, 2), 5, 12, 9.9e9),
    ],
)
def test_layout(fmt: NumberFormat, length: int, vocab_size: int, max_abs: float) -> None:
    assert fmt.length == length
    assert len(fmt.tokens) == vocab_size
    assert len(set(fmt.tokens)) == vocab_size
    assert fmt.max_abs == max_abs
    # sign tokens first, then the ten digits (the decoders rely on these positions)
    assert fmt.tokens[:12] == ("<+>", "<->", *(f"<{d}>" for d in range(10)))
    assert fmt.token_ids(fmt.tokens) == list(range(vocab_size))


def test_p10_exponent_tokens() -> None:
    fmt = P10(digits=3, min_exponent=-2, max_exponent=1)
    assert fmt.tokens[12:] == ("<E-2>", "<E-1>", "<E0>", "<E1>")
    assert list(fmt.exponents) == [-2, -1, 0, 1]


def test_decode_is_vectorized_over_leading_axes() -> None:
    fmt = P10()
    values = [[0.57, -3.0, 0.0], [1e10, -0.0, 12345.0]]
    ids = np.array([[fmt.token_ids(fmt.encode(v).tokens) for v in row] for row in values])
    assert ids.shape == (2, 3, fmt.length)
    out = fmt.decode(ids)
    assert out.shape == (2, 3)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [[0.57, -3.0, 0.0], [1e10, -0.0, 12340.0]])
    assert math.copysign(1.0, out[1, 1]) == -1.0


# ------------------------------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "make",
    [
        lambda: P10(digits=0),
        lambda: P10(digits=-3),
        lambda: P10(min_exponent=3, max_exponent=2),
        lambda: IEEE(exponent_digits=0),
        lambda: IEEE(mantissa_digits=0),
        lambda: IEEE(exponent_digits=-1, mantissa_digits=4),
    ],
)
def test_invalid_constructor_args(make) -> None:
    with pytest.raises(ValueError):
        make()


def test_single_exponent_p10_is_valid() -> None:
    fmt = P10(digits=2, min_exponent=0, max_exponent=0)
    assert fmt.encode(42.0).tokens == _t("+ E0 4 2")


@pytest.mark.parametrize("fmt", [P10(), IEEE(), P10(digits=2, min_exponent=0, max_exponent=0), IEEE(2, 3)])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, float("-nan")])
def test_encode_rejects_non_finite(fmt: NumberFormat, value: float) -> None:
    with pytest.raises(ValueError, match="finite"):
        fmt.encode(value)


# ------------------------------------------------------------------------------------- persistence
@pytest.mark.parametrize(
    "fmt",
    [
        P10(),
        P10(digits=2, min_exponent=-2, max_exponent=2),
        P10(digits=7, min_exponent=0, max_exponent=0),
        IEEE(),
        IEEE(2, 4),
        IEEE(1, 2),
    ],
)
def test_format_from_dict_round_trip(fmt: NumberFormat) -> None:
    spec = fmt.to_dict()
    assert spec["kind"] in ("p10", "ieee")
    rebuilt = format_from_dict(spec)
    assert rebuilt == fmt
    assert type(rebuilt) is type(fmt)
    assert rebuilt.to_dict() == spec
    assert spec == fmt.to_dict()  # format_from_dict must not mutate its argument


def test_to_dict_contents() -> None:
    assert P10().to_dict() == {"kind": "p10", "digits": 4, "min_exponent": -10, "max_exponent": 10}
    assert IEEE(2, 3).to_dict() == {"kind": "ieee", "exponent_digits": 2, "mantissa_digits": 3}


def test_format_from_dict_defaults() -> None:
    assert format_from_dict({"kind": "p10"}) == P10()
    assert format_from_dict({"kind": "ieee", "mantissa_digits": 6}) == IEEE(1, 6)


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": "bf16"},
        {"kind": "P10"},
        {},
        {"digits": 4},
        {"kind": "p10", "exponent_digits": 2},
        {"kind": "ieee", "digits": 4},
        {"kind": "p10", "digits": 4, "bogus": 1},
    ],
)
def test_format_from_dict_rejects_unknown(spec: dict) -> None:
    with pytest.raises(ValueError):
        format_from_dict(spec)


def test_format_from_dict_validates_values() -> None:
    with pytest.raises(ValueError):
        format_from_dict({"kind": "p10", "digits": 0})
    with pytest.raises(ValueError):
        format_from_dict({"kind": "ieee", "exponent_digits": 0})


def test_significance_weighs_mantissa_digits_after_the_first() -> None:
    np.testing.assert_allclose(P10(digits=4).significance(0.5), [1, 1, 1, 0.5, 0.25, 0.125])  # sign, E, d1..d4
    np.testing.assert_allclose(IEEE(exponent_digits=1, mantissa_digits=3).significance(0.1), [1, 1, 1, 1, 0.1, 0.01])
    np.testing.assert_allclose(P10().significance(1.0), np.ones(P10().length))
