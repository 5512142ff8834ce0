"""Training: options, rows -> tensors, batch sampling, the loop, its callbacks and checkpoints."""

from coderlm.training.callbacks import Callback
from coderlm.training.config import TrainConfig
from coderlm.training.objective import LossOf
from coderlm.training.optim import build_optimizer, warmup_cosine
from coderlm.training.sampling import BatchSampler
from coderlm.training.trainer import Trainer, TrainResult

__all__ = [
    "BatchSampler",
    "Callback",
    "LossOf",
    "TrainConfig",
    "TrainResult",
    "Trainer",
    "build_optimizer",
    "warmup_cosine",
]
