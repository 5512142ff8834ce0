"""Pretraining coderlm's own encoder on unlabelled code and graphs (``coderlm pretrain``)."""

from coderlm.pretraining.config import PretrainConfig
from coderlm.pretraining.pretrain import PretrainResult, pretrain

__all__ = ["PretrainConfig", "PretrainResult", "pretrain"]
