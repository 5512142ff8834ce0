"""Training: options, the loop, schedules."""

from coderlm.training.config import TrainConfig
from coderlm.training.loop import train, warmup_cosine

__all__ = ["TrainConfig", "train", "warmup_cosine"]
