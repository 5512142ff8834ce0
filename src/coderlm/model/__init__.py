"""Model configuration, the encoder-decoder, pretrained encoders, and where a network is built and saved."""

from coderlm.model.config import ModelConfig
from coderlm.model.transformer import Decoder, Encoder, EncoderDecoder, KVCache, Memory, count_parameters

__all__ = ["Decoder", "Encoder", "EncoderDecoder", "KVCache", "Memory", "ModelConfig", "count_parameters"]
