"""Training: options, batch sampling, checkpoints, the loop."""

from coderlm.training.config import TrainConfig
from coderlm.training.objective import LossOf
from coderlm.training.sampling import BatchSampler
from coderlm.training.trainer import Trainer, TrainResult, build_optimizer, warmup_cosine

__all__ = ["BatchSampler", "LossOf", "TrainConfig", "TrainResult", "Trainer", "build_optimizer", "warmup_cosine"]
