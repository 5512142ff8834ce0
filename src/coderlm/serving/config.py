"""What ``coderlm serve`` allows and how it batches: one frozen dataclass, every field documented where declared.

Each field is also a ``coderlm serve`` flag (``max_batch`` -> ``--max-batch``), its comment the flag's help.
"""

from __future__ import annotations

import dataclasses

from coderlm.collect.nets import TEXT_STYLES
from coderlm.options import OptionError


@dataclasses.dataclass(frozen=True)
class ServeConfig:
    max_batch: int = 64  # inputs gathered from queued requests into one sampling call; 1 turns micro-batching off
    max_wait_ms: float = 5.0  # longest the first input of a batch waits for others to join it
    queue_size: int = 1024  # inputs waiting per model; a request that would overflow the queue gets 503
    max_inputs: int = 256  # inputs in one request (more: 413)
    max_request_bytes: int = 4 * 2**20  # bytes of a request body, and of the texts it holds (more: 413)
    max_samples: int = 1024  # largest num_samples a request may ask for (more: 422)
    batch_size: int = 0  # inputs per forward pass in batched calls; 0 = the model's own (which seeded calls keep)
    onnx_style: str = "compact"  # how onnx_base64 inputs become text: the style the training data was collected with
    shutdown_timeout: float = 30.0  # seconds given to in-flight requests after SIGTERM/SIGINT

    def __post_init__(self) -> None:
        for name in ("max_batch", "queue_size", "max_inputs", "max_request_bytes", "max_samples"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise OptionError(name, f"must be a positive integer, got {value!r}")
        if self.batch_size < 0:
            raise OptionError("batch_size", f"must be >= 0 (0: the model's own), got {self.batch_size}")
        for name in ("max_wait_ms", "shutdown_timeout"):
            if getattr(self, name) < 0:
                raise OptionError(name, f"must be >= 0, got {getattr(self, name)}")
        if self.queue_size < self.max_inputs:
            raise OptionError(
                "queue_size",
                f"must be >= max_inputs ({self.max_inputs}), got {self.queue_size}: "
                "a request of max_inputs inputs could never be queued",
            )
        if self.onnx_style not in TEXT_STYLES:
            raise OptionError("onnx_style", f"must be one of {TEXT_STYLES}, got {self.onnx_style!r}")
