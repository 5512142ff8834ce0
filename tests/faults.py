"""Fault injection, for tests only: run the command line in this process, and

- SIGKILL it (no clean-up, as a crash or an out-of-memory kill would) right after optimizer step N;
- or make every model's sampling raise when one of its inputs contains MARKER (a model failing
  on some batch, as ``coderlm serve`` must survive).

    python -m tests.faults N train --data ... --out ...       # from the repository root
    python -m tests.faults fail-on MARKER serve --model ...
"""

import os
import signal
import sys

from coderlm import RegressionLM
from coderlm.cli import main
from coderlm.training import Callback, trainer


class KillAfterStep(Callback):
    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, step: int) -> None:
        if step == self.step:
            os.kill(os.getpid(), signal.SIGKILL)


def with_kill(step: int):
    original = trainer.Trainer.__init__

    def init(self, *args, callbacks=(), **kwargs):
        original(self, *args, callbacks=(*callbacks, KillAfterStep(step)), **kwargs)

    return init


def failing_on(marker: str):
    original = RegressionLM.sample

    def sample(self, texts, *args, **kwargs):
        if any(marker in text for text in texts):
            raise RuntimeError(f"injected fault: an input contains {marker!r}")
        return original(self, texts, *args, **kwargs)

    return sample


if __name__ == "__main__":
    if sys.argv[1] == "fail-on":
        RegressionLM.sample = failing_on(sys.argv[2])
        sys.exit(main(sys.argv[3:]))
    trainer.Trainer.__init__ = with_kill(int(sys.argv[1]))
    sys.exit(main(sys.argv[2:]))
