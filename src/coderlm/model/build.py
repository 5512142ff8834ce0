"""Where a network is built: input tokenizer + options -> ``ModelConfig`` -> module.

Used by ``RegressionLM.fit`` and by the regression-head baseline, so both read text the same way.
The input tokenizer is a byte-level BPE learned on the training texts (the scratch encoder), or a
pretrained encoder's own tokenizer; ``model_config`` fills in what the tokenizer and the output
side decide (vocabulary sizes, context, padding id) around the user's options.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from coderlm.model.config import ModelConfig
from coderlm.model.files import TOKENIZER_FILE
from coderlm.model.hf_encoder import SCRATCH, encoder_facts, encoder_folder
from coderlm.model.transfer import adapt_state, check_same_number_tokens, finetune_config
from coderlm.model.transformer import EncoderDecoder
from coderlm.numbers.codec import NumberCodec
from coderlm.numbers.formats import P10, NumberFormat
from coderlm.numbers.target_scale import QuantileScale
from coderlm.options import OptionError
from coderlm.text import load_tokenizer
from coderlm.text.bpe import PRETOKENIZERS, BPETokenizer
from coderlm.text.hf_tokenizer import LAYOUT_MARKERS, PretrainedTokenizer

# Older names: pretokenize="structure" / "plain" chose layout markers for a pretrained encoder's tokenizer.
PRETOKENIZE_ALIASES = {"structure": "always", "plain": "never"}

Tokenizer = BPETokenizer | PretrainedTokenizer


def build_tokenizer(
    texts: Sequence[str],
    encoder: str = SCRATCH,
    *,
    vocab_size: int = 4096,
    pretokenize: str = "code",
    layout_markers: str = "auto",
) -> Tokenizer:
    """A BPE of ``vocab_size`` learned on ``texts`` (``pretokenize``: where merges stop), or, for a
    pretrained ``encoder``, its own tokenizer (``layout_markers``: newline/indent markers)."""
    layout = PRETOKENIZE_ALIASES.get(pretokenize, layout_markers)
    if encoder == SCRATCH:
        if pretokenize in PRETOKENIZE_ALIASES:
            raise OptionError(
                "pretokenize",
                f"{pretokenize!r} is for pretrained encoders; a learned BPE takes one of {list(PRETOKENIZERS)}",
            )
        return BPETokenizer.train(texts, vocab_size, pretokenize=pretokenize)
    if pretokenize not in ("code", *PRETOKENIZE_ALIASES):
        raise OptionError(
            "pretokenize",
            f"{pretokenize!r} applies to a learned BPE; a pretrained encoder uses its own "
            "tokenizer (set layout_markers instead)",
        )
    if layout not in LAYOUT_MARKERS:
        raise OptionError("layout_markers", f"must be one of {list(LAYOUT_MARKERS)}, got {layout!r}")
    return PretrainedTokenizer.from_folder(encoder_folder(encoder), LAYOUT_MARKERS[layout])


def fit_tokenizer(
    texts: Sequence[str], options: dict[str, Any], base: Tokenizer | None, resume_from: Path | None, **bpe: Any
) -> Tokenizer:
    """What a fit reads text with: the init model's tokenizer (fine-tuning), the run folder's (resume), or a
    new one (``build_tokenizer`` with ``bpe``'s options)."""
    if base is not None:
        return base
    if resume_from is not None and (resume_from / TOKENIZER_FILE).is_file():
        return load_tokenizer(resume_from / TOKENIZER_FILE)
    return build_tokenizer(texts, options.get("encoder", SCRATCH), **bpe)


def fit_codec(
    k: int,
    specials: tuple[str, ...],
    values,
    number_format: NumberFormat | None,
    target_scale: str | None,
    base: NumberCodec | None,
) -> NumberCodec:
    """What a fit writes numbers in: ``number_format`` (else the init model's, else P10), the objectives of
    training targets ``values`` (n, k) spelled by rank as ``target_scale`` says (else: a raw init model stays
    raw, anything else is "auto"); fine-tuning checks the number tokens match the init model's."""
    number_format = number_format or (base.format if base is not None else P10())
    kind = target_scale or ("raw" if base is not None and base.scale is None else "auto")
    codec = NumberCodec(number_format, k, specials, QuantileScale.choose(values, kind))
    if base is not None:
        check_same_number_tokens(codec, base)
    return codec


def model_config(
    tokenizer: Tokenizer, max_input_len: int, options: dict[str, Any], *, output_vocab_size: int, output_length: int
) -> ModelConfig:
    """The network's config: ``options`` (``ModelConfig`` fields a user sets) plus what the tokenizer and
    the output side decide. A pretrained encoder brings its embedding table, its position limit and,
    unless set, its width."""
    options = dict(options)
    derived = {"input_vocab_size": tokenizer.vocab_size, "max_input_len": max_input_len}
    encoder = options.get("encoder", SCRATCH)
    if encoder != SCRATCH:
        facts = encoder_facts(encoder)
        derived = {
            "input_vocab_size": max(facts["vocab"], tokenizer.vocab_size),
            "max_input_len": min(max_input_len, facts["max_positions"] or max_input_len),
        }
        options.setdefault("encoder_dim", facts["hidden"])
    if options.get("number_values"):
        try:
            derived["digit_ids"] = tuple(tokenizer.digit_ids())
        except ValueError as error:
            raise OptionError("number_values", str(error), "model option") from None
    return ModelConfig(
        output_vocab_size=output_vocab_size,
        output_length=output_length,
        pad_id=tokenizer.pad_id,
        **derived,
        **options,
    )


def new_network(
    tokenizer: Tokenizer, codec: NumberCodec, options: dict[str, Any], max_input_len: int, seed: int
) -> EncoderDecoder:
    """A fresh encoder-decoder that reads ``tokenizer``'s ids and writes ``codec``'s tokens (weights from ``seed``)."""
    lengths = {"output_vocab_size": codec.vocab_size, "output_length": codec.total_length}
    config = model_config(tokenizer, max_input_len, options | {"number_length": codec.length}, **lengths)
    torch.manual_seed(seed)
    return EncoderDecoder(config)


def finetuned_network(
    base: EncoderDecoder,
    codec: NumberCodec,
    options: dict[str, Any],
    seed: int,
    sources: Sequence[int] | None = None,
) -> EncoderDecoder:
    """``base``'s architecture and weights for ``codec``'s outputs (``model.transfer``); ``options`` may only
    repeat the base's (or change dropout); objective j starts from the base's objective ``sources[j]``.
    ``seed`` draws whatever is new."""
    config = dataclasses.replace(finetune_config(base.cfg, codec.total_length, options), number_length=codec.length)
    state = base.state_dict()  # before anything replaces base (fitting a model from itself)
    torch.manual_seed(seed)
    network = EncoderDecoder(config, base.encoder_config)
    network.load_state_dict(adapt_state(state, codec.length, config.output_length, sources))
    return network
