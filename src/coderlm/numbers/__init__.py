"""Number formats, the multi-objective codec and its decoding automaton."""

from coderlm.numbers.automaton import Automaton, compile_automaton
from coderlm.numbers.codec import SPECIAL_TOKENS, EncodedTargets, NumberCodec
from coderlm.numbers.formats import IEEE, P10, Encoded, NumberFormat, format_from_dict

__all__ = [
    "IEEE",
    "P10",
    "SPECIAL_TOKENS",
    "Automaton",
    "Encoded",
    "EncodedTargets",
    "NumberCodec",
    "NumberFormat",
    "compile_automaton",
    "format_from_dict",
]
