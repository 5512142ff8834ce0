"""An exponential moving average of the trainable weights (``ema_decay``): validated, kept and
returned in place of the live weights, which go on training undisturbed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch import nn


def copy_into(params: list[nn.Parameter], values: list[torch.Tensor]) -> None:
    """Copy ``values`` into the trainable weights ``params``, in place."""
    with torch.no_grad():
        torch._foreach_copy_(params, values)


class MovingAverage:
    """The average of ``params``; its decay ramps up over the first steps ((1 + t) / (10 + t), capped at
    ``decay``) so that the random initialization is forgotten quickly."""

    def __init__(self, params: list[nn.Parameter], decay: float) -> None:
        self.params, self.decay = params, decay
        self.values = [p.detach().clone() for p in params]

    def update(self, step: int) -> None:
        """Fold in the weights after optimizer step ``step`` (0-based)."""
        decay = min(self.decay, (1 + step) / (10 + step))
        with torch.no_grad():
            torch._foreach_lerp_(self.values, [p.detach() for p in self.params], 1.0 - decay)

    def load(self, values: list[torch.Tensor]) -> None:
        """Continue from saved values (a resumed run)."""
        self.values = [value.to(p.device) for p, value in zip(self.params, values, strict=True)]

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        """Inside: the model holds the averaged weights (to validate or copy them); the live ones after."""
        live = [p.detach().clone() for p in self.params]
        copy_into(self.params, self.values)
        try:
            yield
        finally:
            copy_into(self.params, live)
