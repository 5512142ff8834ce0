"""Property tests: rounding accuracy, idempotence, overflow and underflow, for several formats."""

from __future__ import annotations

import decimal
import math
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderlm.numbers import IEEE, P10, NumberFormat

EXACT = decimal.Context(prec=800, rounding=decimal.ROUND_HALF_EVEN, Emin=-9999, Emax=9999)

FORMATS = [
    P10(),
    P10(digits=2, min_exponent=-3, max_exponent=3),
    P10(digits=1, min_exponent=0, max_exponent=2),
    P10(digits=7, min_exponent=-30, max_exponent=20),
    IEEE(),
    IEEE(1, 2),
    IEEE(2, 4),
    IEEE(2, 7),
]
FORMAT_IDS = [repr(f) for f in FORMATS]
SETTINGS = settings(max_examples=200, deadline=None)


def _digits(fmt: NumberFormat) -> int:
    return fmt.digits if isinstance(fmt, P10) else fmt.mantissa_digits


def _smallest_normal(fmt: NumberFormat) -> Decimal:
    if isinstance(fmt, P10):
        return Decimal(10) ** (fmt.min_exponent + fmt.digits - 1)
    return Decimal(10) ** -fmt.max_exponent


def _smallest_positive(fmt: NumberFormat) -> Decimal:
    if isinstance(fmt, P10):
        return Decimal(10) ** fmt.min_exponent
    return Decimal(10) ** (-fmt.max_exponent - fmt.mantissa_digits + 1)


def _largest_unit(fmt: NumberFormat) -> Decimal:
    """Value of one unit of the last mantissa digit at the largest exponent."""
    if isinstance(fmt, P10):
        return Decimal(10) ** fmt.max_exponent
    return Decimal(10) ** (fmt.max_exponent - fmt.mantissa_digits + 1)


def _max_abs(fmt: NumberFormat) -> Decimal:
    return (Decimal(10) ** _digits(fmt) - 1) * _largest_unit(fmt)


def _round_trip(fmt: NumberFormat, value: float) -> tuple[float, object]:
    encoded = fmt.encode(value)
    return float(fmt.decode(np.array(fmt.token_ids(encoded.tokens)))), encoded


def _reference(fmt: NumberFormat, value: float) -> Decimal:
    """Independent rounding: the repr decimal rounded half to even to the format's unit."""
    d = abs(Decimal(repr(value)))
    if not d:
        return d
    n = _digits(fmt)
    unit = max(d.adjusted() - (n - 1), _smallest_positive(fmt).adjusted())
    return d.quantize(Decimal((0, (1,), unit)), rounding=decimal.ROUND_HALF_EVEN, context=EXACT)


def _in_range(fmt: NumberFormat) -> st.SearchStrategy[float]:
    lo, hi = float(_smallest_normal(fmt)), float(_max_abs(fmt))
    magnitudes = st.floats(min_value=lo, max_value=hi)
    return st.tuples(magnitudes, st.booleans()).map(lambda p: -p[0] if p[1] else p[0])


def _same_float_or_close(a: float, b: float, fmt: NumberFormat) -> bool:
    # 10.0**k is exact up to k = 22; beyond that decode may be off by an ulp or two
    if math.copysign(1.0, a) != math.copysign(1.0, b):
        return False
    if _largest_unit(fmt) <= Decimal("1e22") and _smallest_positive(fmt) >= Decimal("1e-22"):
        return a == b
    return math.isclose(a, b, rel_tol=1e-15, abs_tol=0.0)


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
def test_round_trip_within_half_a_unit(fmt: NumberFormat) -> None:
    bound = Decimal("0.5") * Decimal(10) ** (1 - _digits(fmt))

    @SETTINGS
    @given(_in_range(fmt))
    def check(value: float) -> None:
        decoded, encoded = _round_trip(fmt, value)
        assert not encoded.overflow and not encoded.underflow
        assert math.copysign(1.0, decoded) == math.copysign(1.0, value)
        error = abs(EXACT.subtract(Decimal(decoded), Decimal(value)))
        assert error <= EXACT.multiply(bound, abs(Decimal(value))), (value, decoded)

    check()


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
def test_round_trip_matches_reference_rounding(fmt: NumberFormat) -> None:
    limit = _max_abs(fmt)

    @SETTINGS
    @given(st.floats(allow_nan=False, allow_infinity=False))
    def check(value: float) -> None:
        decoded, encoded = _round_trip(fmt, value)
        expected = _reference(fmt, value)
        assert encoded.overflow == (expected > limit)
        assert encoded.underflow == (expected == 0 and value != 0)
        expected_value = math.copysign(float(min(expected, limit)), value)
        assert _same_float_or_close(decoded, expected_value, fmt), (value, decoded, expected_value)

    check()


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
def test_encoding_is_idempotent(fmt: NumberFormat) -> None:
    @SETTINGS
    @given(st.floats(allow_nan=False, allow_infinity=False))
    def check(value: float) -> None:
        decoded, encoded = _round_trip(fmt, value)
        again = fmt.encode(decoded)
        assert again.tokens == encoded.tokens
        assert not again.overflow and not again.underflow

    check()


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
def test_values_above_max_abs_clamp_to_max_abs(fmt: NumberFormat) -> None:
    max_abs = fmt.max_abs
    # Overflow is flagged when the *rounded* value does not fit (as in IEEE 754): at or above
    # max_abs + half a unit. Between max_abs and that, the value rounds to max_abs without a flag.
    boundary = _max_abs(fmt) + _largest_unit(fmt) / 2

    @SETTINGS
    @given(st.floats(min_value=max_abs, exclude_min=True, allow_infinity=False), st.booleans())
    def check(magnitude: float, negative: bool) -> None:
        value = -magnitude if negative else magnitude
        decoded, encoded = _round_trip(fmt, value)
        assert decoded == (-max_abs if negative else max_abs)
        assert not encoded.underflow
        assert encoded.overflow == (Decimal(repr(magnitude)) >= boundary)
        if magnitude >= float(boundary) * (1 + 1e-15):
            assert encoded.overflow

    check()


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
def test_overflow_boundary(fmt: NumberFormat) -> None:
    boundary = _max_abs(fmt) + _largest_unit(fmt) / 2
    for magnitude, overflow in [
        (float(boundary), True),  # exactly half a unit above max_abs: ties to even carry out
        (float(boundary * 2), True),
        (1.7976931348623157e308, True),
        (float(_max_abs(fmt)), False),
        (float(_max_abs(fmt) + _largest_unit(fmt) / 4), False),
    ]:
        for sign in (1.0, -1.0):
            decoded, encoded = _round_trip(fmt, sign * magnitude)
            assert decoded == sign * fmt.max_abs
            assert encoded.overflow == overflow, magnitude


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
def test_tiny_values_underflow_to_signed_zero(fmt: NumberFormat) -> None:
    smallest = _smallest_positive(fmt)
    hi = float(smallest)

    @SETTINGS
    @given(st.floats(min_value=0.0, max_value=hi, exclude_min=True, exclude_max=True), st.booleans())
    def check(magnitude: float, negative: bool) -> None:
        value = -magnitude if negative else magnitude
        decoded, encoded = _round_trip(fmt, value)
        assert not encoded.overflow
        flushed = Decimal(repr(magnitude)) <= smallest / 2
        assert encoded.underflow == flushed
        if flushed:
            assert decoded == 0.0
        else:
            assert _same_float_or_close(abs(decoded), float(smallest), fmt)
        assert math.copysign(1.0, decoded) == math.copysign(1.0, value)

    check()


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
def test_max_abs_property(fmt: NumberFormat) -> None:
    assert fmt.max_abs == float(_max_abs(fmt))
    decoded, encoded = _round_trip(fmt, fmt.max_abs)
    assert decoded == fmt.max_abs
    assert not encoded.overflow
    assert set(encoded.tokens[-_digits(fmt) :]) == {"<9>"}


# ---------------------------------------------------------------------------- float64 limits
@pytest.mark.parametrize(
    "build",
    [
        lambda: IEEE(3, 4),  # exponents to -999: 10**999 overflows
        lambda: P10(digits=4, min_exponent=-320, max_exponent=0),
        lambda: IEEE(1, 19),  # more digits than float64 (and int64 sums) hold
        lambda: P10(digits=19, min_exponent=-30, max_exponent=0),
    ],
)
def test_formats_beyond_float64_are_rejected(build) -> None:
    with pytest.raises(ValueError, match="float64"):
        build()


def test_widest_allowed_formats_round_trip() -> None:
    for fmt, value in [(IEEE(2, 15), 1.2345678901234e-95), (P10(15, -290, 275), 9.87654321e-280)]:
        decoded, encoded = _round_trip(fmt, value)
        assert not encoded.underflow and decoded == value
