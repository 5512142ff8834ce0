"""The learning rate a fit starts from when ``training`` sets none and the weights are not fresh.

- ``init=MODEL`` (a trained coderlm model): 5e-5, the paper's fine-tuning rate.
- ``init=ENCODER_FOLDER`` (a pretrained encoder trained under a new number decoder): 3e-4, the rate of
  every fine-tune in docs/results.md (1e-3 ranked MBXP Python memory level and runtime higher, ONNX text
  lower: "The pretrained encoder with fewer labels").
- Fresh weights, or a frozen encoder whose decoder alone trains: ``TrainConfig``'s own default.
"""

from __future__ import annotations

from typing import Any

from coderlm.model.hf_encoder import SCRATCH

FINETUNE_LEARNING_RATE = 5e-5
ENCODER_LEARNING_RATE = 3e-4


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
