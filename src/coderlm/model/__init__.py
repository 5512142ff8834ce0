"""Model configuration, the encoder-decoder and the regression-head baseline."""

from coderlm.model.config import ModelConfig
from coderlm.model.regression_head import RegressionHead, TargetScaler
from coderlm.model.transformer import Decoder, Encoder, EncoderDecoder, KVCache, Memory, count_parameters

__all__ = [
    "Decoder",
    "Encoder",
    "EncoderDecoder",
    "KVCache",
    "Memory",
    "ModelConfig",
    "RegressionHead",
    "TargetScaler",
    "count_parameters",
]
