"""Fault injection, for tests only: run the command line in this process and SIGKILL it (no clean-up,
as a crash or an out-of-memory kill would) right after optimizer step N.

    python -m tests.faults N train --data ... --out ...   # from the repository root
"""

import os
import signal
import sys

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


if __name__ == "__main__":
    trainer.Trainer.__init__ = with_kill(int(sys.argv[1]))
    sys.exit(main(sys.argv[2:]))
