"""The learning rate a fit starts from when ``training`` sets none and the weights are not fresh.

- ``init=MODEL`` (a trained coderlm model): 5e-5, the paper's fine-tuning rate.
- ``init=ENCODER_FOLDER`` (a pretrained encoder trained under a new number decoder): 3e-4, the rate of
  every fine-tune in docs/results.md (1e-3 ranked MBXP Python memory level and runtime higher, ONNX text
  lower: "The pretrained encoder with fewer labels").
- Fresh weights, or a frozen encoder whose decoder alone trains: ``TrainConfig``'s own default.

And the target noise (``target_noise``) when ``training`` sets none: ``TrainConfig``'s default (0.1) for a
model trained from scratch on fewer than ``NOISE_MAX_ROWS`` rows for at least ``NOISE_MIN_PASSES`` passes
(steps x batch / rows), where it was measured to help or be level (docs/results.md "Training targets
spelled with noise": NB201 at 140-180 rows and 53-267 passes, MBXP Python at 38 passes); 0 (exact targets)
otherwise: with fewer passes the noisy targets were not yet learned (LeetCode C++ runtime at 23 passes
-0.06, a 300-row toy at 27), with more rows the exact spelling no longer overfits (4,500 NB201 cell strings:
accuracy -0.027), and from trained weights (``init=MODEL``, a pretrained or frozen encoder) it was not
measured: the few-shot fine-tunes and the pretrained-encoder figures are exact-target ones.
"""

from __future__ import annotations

from typing import Any

from coderlm.model.hf_encoder import SCRATCH

FINETUNE_LEARNING_RATE = 5e-5
ENCODER_LEARNING_RATE = 3e-4
NOISE_MAX_ROWS = 2000
NOISE_MIN_PASSES = 30


def start_learning_rate(training: dict[str, Any] | None, from_model: bool, model: dict[str, Any]) -> dict[str, float]:
    """``{"learning_rate": ...}`` for such a start (``from_model``: fine-tuning a trained model; ``model``: the
    model options), or ``{}`` where the training options set a rate or the start is fresh."""
    if "learning_rate" in (training or {}):
        return {}
    if from_model:
        return {"learning_rate": FINETUNE_LEARNING_RATE}
    if model.get("encoder", SCRATCH) != SCRATCH and model.get("train_encoder"):
        return {"learning_rate": ENCODER_LEARNING_RATE}
    return {}


def start_target_noise(
    training: dict[str, Any] | None, from_model: bool, model: dict[str, Any], rows: int, passes: float
) -> dict[str, float]:
    """``{"target_noise": 0.0}`` unless the training options set it, or a model starts from scratch (not from
    a trained model, nor a pretrained encoder under the ``model`` options) on fewer than ``NOISE_MAX_ROWS``
    ``rows`` for at least ``NOISE_MIN_PASSES`` ``passes``: then ``{}`` (``TrainConfig``'s default)."""
    if "target_noise" in (training or {}):
        return {}
    scratch = not from_model and model.get("encoder", SCRATCH) == SCRATCH
    if scratch and rows < NOISE_MAX_ROWS and passes >= NOISE_MIN_PASSES:
        return {}
    return {"target_noise": 0.0}
