"""Fixed-length token layouts for one number: P10 and IEEE-style.

Each format knows three things about itself:

* how to turn a finite float into its tokens (``encode``), rounding the value's
  decimal form half to even and clamping what does not fit;
* how to turn a batch of token ids back into floats (``decode``), vectorized;
* which token may come next (``start`` / ``step``), a small automaton that the
  codec compiles into a transition table once, for batched constrained decoding.

The automaton accepts exactly the *canonical* encodings, the ones ``encode``
produces, so no probability mass is spent on spellings that never occur in
training data (e.g. a leading zero digit where a shorter exponent exists).

Rounding rule: a float is first written as the shortest decimal that reads back
as the same float (``repr``: 0.57 -> "0.57", never 0.569999...), and that
decimal is rounded to the format's digits with round-half-to-even. So with four
digits 12345 -> 1234e1 and 12355 -> 1236e1, and 2.675 with three digits -> 2.68.

Clamping follows IEEE 754: a value is flagged as overflow when its *rounded*
magnitude exceeds the largest representable one (so with four digits 9.9994e13
rounds to 9999e10 unflagged, while 9.9995e13 clamps to it and is flagged).
Ranges are limited so every representable value is a finite, normal float64.
"""

from __future__ import annotations

import abc
import dataclasses
import decimal
import math
from collections.abc import Hashable, Sequence

import numpy as np
import torch

SIGNS = ("<+>", "<->")
DIGITS = tuple(f"<{d}>" for d in range(10))

MAX_DIGITS = 15  # float64 holds 15 significant decimal digits exactly
MAX_EXPONENT = 290  # keeps every representable value, and 10**|e|, finite and normal in float64

_DECIMAL_CONTEXT = decimal.Context(prec=60, rounding=decimal.ROUND_HALF_EVEN)


@dataclasses.dataclass(frozen=True)
class Encoded:
    """Tokens of one finite value, and whether encoding had to change its magnitude."""

    tokens: tuple[str, ...]
    overflow: bool = False  # |value| above the largest representable: clamped to it
    underflow: bool = False  # nonzero |value| below the smallest: flushed to (signed) zero


def _decimal(value: float) -> decimal.Decimal:
    """The shortest decimal that reads back as ``value`` (what ``repr`` prints)."""
    return decimal.Decimal(repr(float(value)))


def _round_integer(value: decimal.Decimal, exponent: int) -> int:
    """``value / 10**exponent`` rounded half to even, exactly."""
    scaled = value.scaleb(-exponent, _DECIMAL_CONTEXT)
    return int(scaled.to_integral_value(rounding=decimal.ROUND_HALF_EVEN, context=_DECIMAL_CONTEXT))


def _pow10(exponents: np.ndarray) -> np.ndarray:
    # 10.0**k is exact for |k| <= 22, so m * 10**k and m / 10**k are correctly rounded.
    return np.power(10.0, np.abs(exponents).astype(np.float64))


def _scale(mantissa: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """``mantissa * 10**exponent`` with one rounding when |exponent| <= 22."""
    power = _pow10(exponent)
    with np.errstate(over="ignore"):
        return np.where(exponent >= 0, mantissa * power, mantissa / power)


class NumberFormat(abc.ABC):
    """A layout of ``length`` tokens for one number, over the vocabulary ``tokens``."""

    tokens: tuple[str, ...]
    length: int

    @abc.abstractmethod
    def encode(self, value: float) -> Encoded:
        """Tokens for a finite ``value``; -0.0 keeps its sign."""

    @abc.abstractmethod
    def decode(self, ids: np.ndarray) -> np.ndarray:
        """Floats for ids of shape (..., length), indices into ``tokens``."""

    @abc.abstractmethod
    def start(self) -> Hashable:
        """Automaton state before the first token."""

    @abc.abstractmethod
    def step(self, state: Hashable, token: str) -> Hashable | None:
        """State after ``token``, or None if ``token`` may not follow."""

    @abc.abstractmethod
    def is_final(self, state: Hashable) -> bool:
        """Whether ``state`` ends a complete number."""

    @property
    @abc.abstractmethod
    def max_abs(self) -> float:
        """Largest representable magnitude."""

    @abc.abstractmethod
    def to_dict(self) -> dict:
        """JSON-ready description, inverse of ``format_from_dict``."""

    @property
    @abc.abstractmethod
    def mantissa_length(self) -> int:
        """Mantissa digits: the format's last tokens, most significant first."""

    def ordinal_groups(self) -> tuple[tuple[str, ...], ...]:
        """Token sets whose order is numeric order (digits 0..9; P10's exponents, lowest first): within one,
        a wrong token is nearer or farther from the right one (the training option ``ordinal_loss``)."""
        return (DIGITS,)

    def significance(self, decay: float) -> np.ndarray:
        """A weight per token: 1 for the sign and exponent tokens and the first mantissa digit, then
        ``decay**k`` for the k-th digit after it (the training option ``digit_decay``)."""
        weights = np.ones(self.length)
        weights[self.length - self.mantissa_length :] = decay ** np.arange(self.mantissa_length, dtype=np.float64)
        return weights

    @abc.abstractmethod
    def ascending(self, prefix: torch.Tensor) -> torch.Tensor:
        """Whether the next token's ids rise with the number's value, for prefixes (..., t) of t < ``length``
        ids (bool, shape (...)): numbers sharing a prefix are one interval of the number line, and the
        tokens allowed after it split that interval in id order, upward or downward (the quantile walk,
        ``coderlm.decoding.walk``)."""

    def unit(self, ids: np.ndarray) -> np.ndarray:
        """Magnitude of one step of the last mantissa digit for ids (..., length): the width of the interval
        a spelled number stands for."""
        bumped = np.array(ids, copy=True)
        bumped[..., -1] += 1  # digit value 10 is still arithmetic in ``decode``
        return np.abs(self.decode(bumped) - self.decode(ids))

    def token_ids(self, tokens: Sequence[str]) -> list[int]:
        index = {t: i for i, t in enumerate(self.tokens)}
        return [index[t] for t in tokens]

    def _digit_values(self, ids: np.ndarray) -> np.ndarray:
        """Digit value of each id (ids of ``<0>``..``<9>`` sit at 2..11 in every format)."""
        return ids.astype(np.int64) - 2


@dataclasses.dataclass(frozen=True)
class P10(NumberFormat):
    """``<sign><E{e}><d1>...<dN>`` = sign * (d1...dN as an integer) * 10**e.

    Example with 4 digits: 72.5 -> ``<+><E-2><7><2><5><0>``. The mantissa is
    normalized (d1 != 0) except at the smallest exponent, where leading zeros
    hold zero and values too small to normalize (gradual underflow). Zero is
    ``<+><E{min}><0>...<0>``; -0.0 is the same with ``<->``.
    """

    digits: int = 4  # mantissa digits N
    min_exponent: int = -10  # exponent of the last mantissa digit, lowest
    max_exponent: int = 10  # ... and highest

    def __post_init__(self) -> None:
        if not 1 <= self.digits <= MAX_DIGITS:
            raise ValueError(f"P10 digits must be in 1..{MAX_DIGITS} (float64 precision), got {self.digits}")
        if self.min_exponent > self.max_exponent:
            raise ValueError(f"P10 min_exponent ({self.min_exponent}) must be <= max_exponent ({self.max_exponent})")
        if self.min_exponent < -MAX_EXPONENT or self.max_exponent + self.digits > MAX_EXPONENT:
            raise ValueError(
                f"P10 range must stay within float64: need min_exponent >= -{MAX_EXPONENT} and "
                f"max_exponent + digits <= {MAX_EXPONENT}, got {self.min_exponent}, {self.max_exponent}, {self.digits}"
            )

    @property
    def exponents(self) -> range:
        return range(self.min_exponent, self.max_exponent + 1)

    @property
    def tokens(self) -> tuple[str, ...]:  # type: ignore[override]
        return SIGNS + DIGITS + tuple(f"<E{e}>" for e in self.exponents)

    @property
    def length(self) -> int:  # type: ignore[override]
        return 2 + self.digits

    @property
    def mantissa_length(self) -> int:
        return self.digits

    def ordinal_groups(self) -> tuple[tuple[str, ...], ...]:
        return (DIGITS, tuple(f"<E{e}>" for e in self.exponents))

    @property
    def max_abs(self) -> float:
        return float((10**self.digits - 1) * decimal.Decimal(10) ** self.max_exponent)

    def encode(self, value: float) -> Encoded:
        if not math.isfinite(value):
            raise ValueError(f"P10 encodes finite values only, got {value!r}")
        sign = SIGNS[1] if math.copysign(1.0, value) < 0 else SIGNS[0]
        magnitude = abs(_decimal(value))
        n = self.digits
        mantissa, exponent, overflow, underflow = 0, self.min_exponent, False, False
        if magnitude:
            exponent = max(magnitude.adjusted() - (n - 1), self.min_exponent)
            mantissa = _round_integer(magnitude, exponent)
            if mantissa == 10**n:  # rounding carried into a new digit: 9999.5 -> 1000e1
                mantissa, exponent = 10 ** (n - 1), exponent + 1
            if exponent > self.max_exponent:
                mantissa, exponent, overflow = 10**n - 1, self.max_exponent, True
            underflow = mantissa == 0
        digits = tuple(f"<{d}>" for d in str(mantissa).zfill(n))
        return Encoded((sign, f"<E{exponent}>", *digits), overflow, underflow)

    def decode(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids)
        sign = np.where(ids[..., 0] == 1, -1.0, 1.0)
        exponent = ids[..., 1].astype(np.int64) - 12 + self.min_exponent
        weights = 10 ** np.arange(self.digits - 1, -1, -1, dtype=np.int64)
        mantissa = (self._digit_values(ids[..., 2:]) * weights).sum(-1).astype(np.float64)
        return sign * _scale(mantissa, exponent)

    # Automaton: "start" -> "sign" -> ("lead", may_be_zero) -> ("digit", i) ... -> "end".
    def start(self) -> Hashable:
        return "start"

    def step(self, state: Hashable, token: str) -> Hashable | None:
        if state == "start":
            return "sign" if token in SIGNS else None
        if state == "sign":
            if not (token.startswith("<E") and token in self.tokens):
                return None
            return ("lead", int(token[2:-1]) == self.min_exponent)
        if token not in DIGITS:
            return None
        if isinstance(state, tuple) and state[0] == "lead":
            if token == "<0>" and not state[1]:
                return None
            position = 1
        elif isinstance(state, tuple) and state[0] == "digit":
            position = state[1] + 1
        else:
            return None
        return "end" if position == self.digits else ("digit", position)

    def is_final(self, state: Hashable) -> bool:
        return state == "end"

    def ascending(self, prefix: torch.Tensor) -> torch.Tensor:
        # the sign: <-> (id 1) below <+> (id 0); then exponents and digits rise with the magnitude
        if prefix.shape[-1] == 0:
            return torch.zeros(prefix.shape[:-1], dtype=torch.bool, device=prefix.device)
        return prefix[..., 0] == 0

    def to_dict(self) -> dict:
        return {"kind": "p10", **dataclasses.asdict(self)}


@dataclasses.dataclass(frozen=True)
class IEEE(NumberFormat):
    """``<sign><exp sign><e1>..<eE><d1>..<dM>`` = sign * d1.d2...dM * 10**(+-e1...eE).

    Example with E=1, M=4: 72.5 -> ``<+><+><1><7><2><5><0>``. Normalized (d1 != 0)
    except at the smallest exponent -(10**E - 1), which holds zero and gradual
    underflow. An all-zero exponent is written with ``<+>``; ``<->`` never
    precedes an all-zero exponent.
    """

    exponent_digits: int = 1  # E
    mantissa_digits: int = 4  # M

    def __post_init__(self) -> None:
        if self.exponent_digits not in (1, 2):
            raise ValueError(f"IEEE exponent_digits must be 1 or 2 (float64 range), got {self.exponent_digits}")
        if not 1 <= self.mantissa_digits <= MAX_DIGITS:
            raise ValueError(
                f"IEEE mantissa_digits must be in 1..{MAX_DIGITS} (float64 precision), got {self.mantissa_digits}"
            )

    @property
    def tokens(self) -> tuple[str, ...]:  # type: ignore[override]
        return SIGNS + DIGITS

    @property
    def length(self) -> int:  # type: ignore[override]
        return 2 + self.exponent_digits + self.mantissa_digits

    @property
    def mantissa_length(self) -> int:
        return self.mantissa_digits

    @property
    def max_exponent(self) -> int:
        return 10**self.exponent_digits - 1

    @property
    def max_abs(self) -> float:
        m = self.mantissa_digits
        return float((10**m - 1) * decimal.Decimal(10) ** (self.max_exponent - m + 1))

    def encode(self, value: float) -> Encoded:
        if not math.isfinite(value):
            raise ValueError(f"IEEE encodes finite values only, got {value!r}")
        sign = SIGNS[1] if math.copysign(1.0, value) < 0 else SIGNS[0]
        magnitude = abs(_decimal(value))
        m, top = self.mantissa_digits, self.max_exponent
        mantissa, exponent, overflow, underflow = 0, -top, False, False
        if magnitude:
            exponent = max(magnitude.adjusted(), -top)
            mantissa = _round_integer(magnitude, exponent - (m - 1))
            if mantissa == 10**m:
                mantissa, exponent = 10 ** (m - 1), exponent + 1
            if exponent > top:
                mantissa, exponent, overflow = 10**m - 1, top, True
            underflow = mantissa == 0
        exp_sign = SIGNS[1] if exponent < 0 else SIGNS[0]
        exp_digits = tuple(f"<{d}>" for d in str(abs(exponent)).zfill(self.exponent_digits))
        digits = tuple(f"<{d}>" for d in str(mantissa).zfill(m))
        return Encoded((sign, exp_sign, *exp_digits, *digits), overflow, underflow)

    def decode(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids)
        e, m = self.exponent_digits, self.mantissa_digits
        sign = np.where(ids[..., 0] == 1, -1.0, 1.0)
        exp_weights = 10 ** np.arange(e - 1, -1, -1, dtype=np.int64)
        exponent = (self._digit_values(ids[..., 2 : 2 + e]) * exp_weights).sum(-1)
        exponent = np.where(ids[..., 1] == 1, -exponent, exponent)
        weights = 10 ** np.arange(m - 1, -1, -1, dtype=np.int64)
        mantissa = (self._digit_values(ids[..., 2 + e :]) * weights).sum(-1).astype(np.float64)
        return sign * _scale(mantissa, exponent - (m - 1))

    # Automaton states: "start" -> "sign" -> ("exp", negative, i, all_zero, all_nine)
    # -> ("digit", i, lead_may_be_zero) -> "end".
    def start(self) -> Hashable:
        return "start"

    def step(self, state: Hashable, token: str) -> Hashable | None:
        e, m = self.exponent_digits, self.mantissa_digits
        if state == "start":
            return "sign" if token in SIGNS else None
        if state == "sign":
            return ("exp", token == SIGNS[1], 0, True, True) if token in SIGNS else None
        if token not in DIGITS:
            return None
        if not isinstance(state, tuple):
            return None
        if state[0] == "exp":
            _, negative, i, all_zero, all_nine = state
            all_zero, all_nine = all_zero and token == "<0>", all_nine and token == "<9>"
            if i + 1 < e:
                return ("exp", negative, i + 1, all_zero, all_nine)
            if negative and all_zero:  # "-0...0" spells exponent zero; "+0...0" is canonical
                return None
            return ("digit", 0, negative and all_nine)
        if state[0] == "digit":
            _, i, lead_may_be_zero = state
            if i == 0 and token == "<0>" and not lead_may_be_zero:
                return None
            return "end" if i + 1 == m else ("digit", i + 1, lead_may_be_zero)
        return None

    def is_final(self, state: Hashable) -> bool:
        return state == "end"

    def ascending(self, prefix: torch.Tensor) -> torch.Tensor:
        t = prefix.shape[-1]
        if t == 0:  # the sign: <-> (id 1) below <+> (id 0)
            return torch.zeros(prefix.shape[:-1], dtype=torch.bool, device=prefix.device)
        positive = prefix[..., 0] == 0
        if t == 1:  # the exponent's sign: a negative exponent is the smaller magnitude
            return ~positive
        if t < 2 + self.exponent_digits:  # exponent digits: a larger negative exponent is a smaller magnitude
            return positive == (prefix[..., 1] == 0)
        return positive

    def to_dict(self) -> dict:
        return {"kind": "ieee", **dataclasses.asdict(self)}


def format_from_dict(spec: dict) -> NumberFormat:
    """Rebuild a format from ``to_dict()``; unknown kinds or fields raise ValueError."""
    spec = dict(spec)
    kind = spec.pop("kind", None)
    classes = {"p10": P10, "ieee": IEEE}
    if kind not in classes:
        raise ValueError(f"unknown number format kind {kind!r}; expected one of {sorted(classes)}")
    cls = classes[kind]
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(spec) - known)
    if unknown:
        raise ValueError(f"unknown option(s) for number format {kind!r}: {unknown}; known: {sorted(known)}")
    return cls(**spec)
