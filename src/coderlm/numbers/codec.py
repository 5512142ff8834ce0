"""Several objectives, one after another, with optional special values.

A ``NumberCodec`` owns the decoder's vocabulary (the format's tokens, then the
special tokens) and turns target arrays (n, k) into id arrays (n, k * L) and
back. Objective j is always tokens ``[j * L, (j + 1) * L)``, so later objectives
are generated conditioned on earlier ones.

Special values, when enabled, are whole-number spellings: a special token at an
objective's first position is repeated over its L positions (the automaton
forces the repeats, so they cost no probability).

==========  =============  ==========================================
special     token          encodes / decodes
==========  =============  ==========================================
``nan``     ``<NaN>``      float NaN
``+inf``    ``<+Inf>``     +inf
``-inf``    ``<-Inf>``     -inf
``invalid`` ``<Invalid>``  rows flagged invalid (e.g. a failed run); decodes to NaN
==========  =============  ==========================================
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Hashable, Sequence

import numpy as np
import torch

from coderlm.numbers.automaton import Automaton, compile_automaton
from coderlm.numbers.formats import P10, NumberFormat, format_from_dict
from coderlm.numbers.target_scale import QuantileScale

SPECIAL_TOKENS = {"nan": "<NaN>", "+inf": "<+Inf>", "-inf": "<-Inf>", "invalid": "<Invalid>"}
_SPECIAL_VALUES = {"nan": math.nan, "+inf": math.inf, "-inf": -math.inf, "invalid": math.nan}


@dataclasses.dataclass(frozen=True)
class EncodedTargets:
    ids: np.ndarray  # (n, k * L) int64
    overflow: int  # values clamped to the largest magnitude
    underflow: int  # nonzero values flushed to zero


@dataclasses.dataclass(frozen=True)
class NumberCodec:
    """The decoder's number language: ``num_objectives`` numbers in ``format``."""

    format: NumberFormat = dataclasses.field(default_factory=P10)
    num_objectives: int = 1
    specials: tuple[str, ...] = ()  # subset of SPECIAL_TOKENS' keys
    scale: QuantileScale | None = None  # targets spelled by their training rank (target_scale.py); None: as they are

    def __post_init__(self) -> None:
        if self.num_objectives < 1:
            raise ValueError(f"num_objectives must be >= 1, got {self.num_objectives}")
        specials = tuple(self.specials)
        unknown = [s for s in specials if s not in SPECIAL_TOKENS]
        if unknown:
            raise ValueError(f"unknown special value(s) {unknown}; known: {list(SPECIAL_TOKENS)}")
        ordered = tuple(s for s in SPECIAL_TOKENS if s in specials)
        object.__setattr__(self, "specials", ordered)
        if self.scale is not None and self.scale.num_objectives != self.num_objectives:
            raise ValueError(
                f"target scale has {self.scale.num_objectives} objectives, the codec {self.num_objectives}"
            )

    # ------------------------------------------------------------ vocabulary
    @functools.cached_property
    def vocab(self) -> tuple[str, ...]:
        return self.format.tokens + tuple(SPECIAL_TOKENS[s] for s in self.specials)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @functools.cached_property
    def nan_ids(self) -> tuple[int, ...]:
        """Ids of the special tokens that decode to NaN (``<NaN>``, ``<Invalid>``)."""
        n_format = len(self.format.tokens)
        return tuple(n_format + i for i, name in enumerate(self.specials) if math.isnan(_SPECIAL_VALUES[name]))

    @property
    def length(self) -> int:
        """Tokens per objective."""
        return self.format.length

    @property
    def total_length(self) -> int:
        """Tokens for all objectives."""
        return self.length * self.num_objectives

    @functools.cached_property
    def _token_id(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.vocab)}

    def ids_to_tokens(self, ids: Sequence[int]) -> list[str]:
        return [self.vocab[int(i)] for i in ids]

    # -------------------------------------------------------------- encoding
    def encode(self, values: np.ndarray | Sequence, invalid: np.ndarray | None = None) -> EncodedTargets:
        """Ids (n, k * L) for targets (n, k). ``invalid`` (n, k) marks rows to spell ``<Invalid>``.

        Raises ValueError naming the row and objective of a non-finite value the
        codec has no special token for.
        """
        values = np.asarray(values, dtype=np.float64)
        if values.ndim == 1 and self.num_objectives == 1:
            values = values[:, None]
        if values.ndim != 2 or values.shape[1] != self.num_objectives:
            raise ValueError(f"targets must have shape (n, {self.num_objectives}), got {values.shape}")
        flags = np.zeros(values.shape, bool) if invalid is None else np.asarray(invalid, bool)
        if flags.ndim == 1 and values.shape[1] == 1:
            flags = flags[:, None]
        if flags.shape != values.shape:
            raise ValueError(f"invalid mask shape {flags.shape} != targets shape {values.shape}")
        if flags.any() and "invalid" not in self.specials:
            raise ValueError("rows are marked invalid but the codec has no 'invalid' special token")
        spelled = self.scale.forward(values) if self.scale is not None else values
        out = np.empty((values.shape[0], self.total_length), dtype=np.int64)
        overflow = underflow = 0
        for (row, obj), value in np.ndenumerate(values):
            tokens = self._special_tokens_for(value, bool(flags[row, obj]), row, obj)
            if tokens is None:
                encoded = self.format.encode(float(spelled[row, obj]))
                tokens = encoded.tokens
                overflow += encoded.overflow
                underflow += encoded.underflow
            out[row, obj * self.length : (obj + 1) * self.length] = [self._token_id[t] for t in tokens]
        return EncodedTargets(out, overflow, underflow)

    def _special_tokens_for(self, value: float, invalid: bool, row: int, obj: int) -> tuple[str, ...] | None:
        if invalid:
            name = "invalid"
        elif math.isnan(value):
            name = "nan"
        elif math.isinf(value):
            name = "+inf" if value > 0 else "-inf"
        else:
            return None
        if name not in self.specials:
            raise ValueError(
                f"row {row}, objective {obj}: value {value!r} is not finite and the codec has no "
                f"{name!r} special token (enable it with specials=({name!r},))"
            )
        return (SPECIAL_TOKENS[name],) * self.length

    # -------------------------------------------------------------- decoding
    def decode(self, ids: np.ndarray | torch.Tensor, within: np.ndarray | None = None) -> np.ndarray:
        """Float64 values (..., k) for ids (..., k * L). Special tokens decode to NaN/±inf. ``within`` (..., k),
        in [0, 1]: a place inside each spelled number's interval (one step of its last digit, centred on it;
        0.5 is the number), as the quantile walk leaves it; the value moves there before the target scale."""
        ids = ids.cpu().numpy() if isinstance(ids, torch.Tensor) else np.asarray(ids)
        ids = ids.reshape(*ids.shape[:-1], self.num_objectives, self.length)
        n_format = len(self.format.tokens)
        first = ids[..., 0]
        numeric = np.where(ids < n_format, ids, 0)
        values = self.format.decode(numeric)
        if within is not None:
            values = values + (np.asarray(within, dtype=np.float64) - 0.5) * self.format.unit(numeric)
        if self.scale is not None:
            values = self.scale.inverse(values)
        for offset, name in enumerate(self.specials):
            values = np.where(first == n_format + offset, _SPECIAL_VALUES[name], values)
        return values.astype(np.float64, copy=False)

    def special_kinds(self, ids: np.ndarray | torch.Tensor) -> np.ndarray:
        """Per objective (..., k): '' for a number, else the special's name ('nan', 'invalid', ...)."""
        ids = ids.cpu().numpy() if isinstance(ids, torch.Tensor) else np.asarray(ids)
        first = ids.reshape(*ids.shape[:-1], self.num_objectives, self.length)[..., 0]
        names = np.array([""] * len(self.format.tokens) + list(self.specials), dtype=object)
        return names[first].astype(str)

    # ------------------------------------------------------------- automaton
    @functools.cached_property
    def automaton(self) -> Automaton:
        """All objectives chained; accepts exactly the sequences ``encode`` can produce."""
        special_tokens = {SPECIAL_TOKENS[s] for s in self.specials}
        fmt, length, k = self.format, self.length, self.num_objectives

        def step(state: Hashable, token: str) -> Hashable | None:
            if state == "done":
                return None
            obj, inner = state
            if isinstance(inner, tuple) and inner[0] == "special":
                _, special, position = inner
                if token != special:
                    return None
                return finish(obj) if position + 1 == length else (obj, ("special", special, position + 1))
            if inner == fmt.start() and token in special_tokens:
                return finish(obj) if length == 1 else (obj, ("special", token, 1))
            if token in special_tokens:
                return None
            nxt = fmt.step(inner, token)
            if nxt is None:
                return None
            return finish(obj) if fmt.is_final(nxt) else (obj, nxt)

        def finish(obj: int) -> Hashable:
            return "done" if obj + 1 == k else (obj + 1, fmt.start())

        return compile_automaton(self.vocab, (0, fmt.start()), step, lambda s: s == "done")

    # ----------------------------------------------------------- persistence
    def to_dict(self) -> dict:
        spec = {"format": self.format.to_dict(), "num_objectives": self.num_objectives, "specials": list(self.specials)}
        return spec | ({"scale": self.scale.to_dict()} if self.scale is not None else {})

    @classmethod
    def from_dict(cls, spec: dict) -> NumberCodec:
        unknown = sorted(set(spec) - {"format", "num_objectives", "specials", "scale"})
        if unknown:
            raise ValueError(f"unknown number codec option(s): {unknown}")
        if "format" not in spec:
            raise ValueError("number codec description lacks its 'format'")
        return cls(
            format=format_from_dict(spec["format"]),
            num_objectives=int(spec.get("num_objectives", 1)),
            specials=tuple(spec.get("specials", ())),
            scale=QuantileScale.from_dict(spec["scale"]) if spec.get("scale") is not None else None,
        )
