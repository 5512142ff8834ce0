"""Shared fixtures: tiny models that build and run in milliseconds on CPU."""

from __future__ import annotations

import pytest
import torch

from coderlm.model import EncoderDecoder, ModelConfig
from coderlm.numbers import P10, NumberCodec


def tiny_config(**overrides) -> ModelConfig:
    values = dict(
        input_vocab_size=99,
        output_vocab_size=33,
        output_length=12,
        max_input_len=24,
        encoder_dim=32,
        encoder_layers=2,
        encoder_heads=4,
        decoder_dim=32,
        decoder_layers=2,
        decoder_heads=4,
    )
    values.update(overrides)
    return ModelConfig(**values)


@pytest.fixture
def codec() -> NumberCodec:
    return NumberCodec(P10(), num_objectives=2, specials=("nan",))


@pytest.fixture
def tiny(codec: NumberCodec) -> EncoderDecoder:
    torch.manual_seed(0)
    model = EncoderDecoder(tiny_config(output_vocab_size=codec.vocab_size, output_length=codec.total_length))
    return model.eval()


@pytest.fixture
def inputs() -> tuple[torch.Tensor, torch.Tensor]:
    """Three inputs of lengths 24, 10 and 1, right-padded with id 0."""
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 99, (3, 24), generator=generator)
    mask = torch.arange(24)[None, :] < torch.tensor([24, 10, 1])[:, None]
    return ids.masked_fill(~mask, 0), mask
