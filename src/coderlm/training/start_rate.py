"""The learning rate a fit starts from when ``training`` sets none and the weights are not fresh.

- ``init=MODEL`` (a trained coderlm model): 5e-5, the paper's fine-tuning rate.
- ``init=ENCODER_FOLDER`` (a pretrained encoder trained under a new number decoder): 3e-4, the rate of
  every fine-tune in docs/results.md (1e-3 ranked MBXP Python memory level and runtime higher, ONNX text
  lower: "The pretrained encoder with fewer labels").
- Fresh weights, or a frozen encoder whose decoder alone trains: ``TrainConfig``'s own default.

And the target noise (``target_noise``) when ``training`` sets none: ``TrainConfig``'s default (0.1) for a
model trained from scratch on fewer than ``NOISE_MAX_ROWS`` rows, where it was measured to help
(docs/results.md "Training targets spelled with noise": 140-1,620 training rows); 0 (exact targets) on
more (at 4,500 NB201 cell strings it cost 0.027 on accuracy) and for any start from trained weights
(``init=MODEL``, a pretrained or frozen encoder), where it was not measured: the few-shot fine-tunes and
the pretrained-encoder figures are exact-target ones.
"""

from __future__ import annotations

from typing import Any

from coderlm.model.hf_encoder import SCRATCH

FINETUNE_LEARNING_RATE = 5e-5
ENCODER_LEARNING_RATE = 3e-4
NOISE_MAX_ROWS = 2000


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
    training: dict[str, Any] | None, from_model: bool, model: dict[str, Any], rows: int
) -> dict[str, float]:
    """``{"target_noise": 0.0}`` for a start from trained weights (a model, or a pretrained encoder under the
    ``model`` options) or ``rows`` >= ``NOISE_MAX_ROWS`` training rows; ``{}`` (``TrainConfig``'s default)
    where the training options set it or a model starts from scratch on fewer rows."""
    if "target_noise" in (training or {}):
        return {}
    if from_model or model.get("encoder", SCRATCH) != SCRATCH or rows >= NOISE_MAX_ROWS:
        return {"target_noise": 0.0}
    return {}
