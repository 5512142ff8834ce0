"""The learning rate, target noise and moving average a fit starts from when ``training`` sets none.

Learning rate:

- ``init=MODEL`` (a trained coderlm model): 5e-5, the paper's fine-tuning rate.
- ``init=ENCODER_FOLDER`` (a pretrained encoder trained under a new number decoder): 3e-4, the rate of
  every fine-tune in docs/results.md (1e-3 ranked MBXP Python memory level and runtime higher, ONNX text
  lower: "The pretrained encoder with fewer labels").
- Fresh weights on network text (``coderlm.text.kind``): 3e-4 on ONNX text (fewer than ``NOISE_MAX_ROWS``
  rows) and on NAS-Bench-201 cell strings (fewer than ``CELL_MAX_ROWS`` rows). A third of the usual rate
  ranked ONNX text better at every size measured (NB201 accuracy and Pixel3 latency from 180, 405 and 1,215
  networks, the quickstart's CPU latency from 140, FLOPs level) and cell strings from 180 and 450 networks,
  but cell strings worse on Pixel3 from 585 and 810 (0.925 against 0.939, 0.923 against 0.950) and MBXP
  Python memory worse from 450 programs (0.690 against 0.790): docs/results.md "The small-data rate with
  the noise" and "The rate by the kind of text".
- Any other fresh start, or a frozen encoder whose decoder alone trains: ``TrainConfig``'s own default (1e-3).

Moving average (``ema_decay``): a model trained from scratch validates, keeps and returns a moving average of
its weights, decay ``1 - EMA_SPAN / steps`` (0.99 at 600 steps, 0.998 at 3,000). The average's own ramp
((1 + t) / (10 + t), ``training.moving_average``) stays below that cap for the whole run, so in effect each
step's average weighs the recent weights most, about the last tenth of the steps so far. Measured: better
where the kept weights came earliest, elsewhere within a seed spread (docs/results.md "A moving average from
scratch"): 180 ONNX networks Pixel3 latency +0.019 (every seed up) and accuracy +0.025, 180 cell strings
Pixel3 +0.009, level on 405 ONNX networks, the quickstart's data and 585 and 1,620 cell strings; MBXP Python
memory +0.03 / +0.00 (two seeds, ``bench/programs.py``'s 0.998). Fine-tunes and frozen encoders keep
``TrainConfig``'s 0 (not measured).

Target noise (``target_noise``): ``TrainConfig``'s default (0.1) on small data, 0 (exact targets)
otherwise. Small data is a new number decoder (a model from scratch, or a pretrained encoder fine-tuned under
it) trained on fewer than ``NOISE_MAX_ROWS`` rows for at least ``NOISE_MIN_PASSES`` passes (steps x batch /
rows), where the noise was measured to help or be level (docs/results.md "Training targets spelled with
noise": NB201 at 140-1,620 rows and 29.6-267 passes, MBXP Python at 38 passes; "The pretrained encoder on few
labels spelled with noise": ``builtin:python-encoder`` fine-tuned on 250 and 500 LeetCode and 500 and 1,265
MBXP Python programs, 38-128 passes); with fewer passes the noisy targets were not yet learned (LeetCode C++
runtime at 23 passes -0.06, a 300-row toy at 27), with more rows the exact spelling no longer overfits (4,500
NB201 cell strings: accuracy -0.027). A trained model (``init=MODEL``: the few-shot fine-tunes) and a frozen encoder
keep exact targets (not measured with noise).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from coderlm.model.hf_encoder import SCRATCH
from coderlm.text.kind import CELL, ONNX, OTHER, text_kind
from coderlm.training.config import TrainConfig

FINETUNE_LEARNING_RATE = 5e-5
ENCODER_LEARNING_RATE = 3e-4
NETWORK_LEARNING_RATE = 3e-4
CELL_MAX_ROWS = 500
NOISE_MAX_ROWS = 2000
NOISE_MIN_PASSES = 28
EMA_SPAN = 6  # ema_decay = 1 - EMA_SPAN / steps from scratch


def from_scratch(from_model: bool, model: dict[str, Any]) -> bool:
    """Whether a fit starts from fresh weights: not from a trained model, nor a pretrained encoder under the
    ``model`` options."""
    return not from_model and model.get("encoder", SCRATCH) == SCRATCH


def encoder_finetune(from_model: bool, model: dict[str, Any]) -> bool:
    """Whether a fit trains a pretrained encoder under a new number decoder (``init=ENCODER_FOLDER``)."""
    return not from_model and model.get("encoder", SCRATCH) != SCRATCH and bool(model.get("train_encoder"))


def small_data(from_model: bool, model: dict[str, Any], rows: int, passes: float) -> bool:
    """Whether a fit trains a new number decoder (from scratch, or over a pretrained encoder it fine-tunes) on
    fewer than ``NOISE_MAX_ROWS`` ``rows`` for at least ``NOISE_MIN_PASSES`` ``passes``."""
    new_decoder = from_scratch(from_model, model) or encoder_finetune(from_model, model)
    return new_decoder and rows < NOISE_MAX_ROWS and passes >= NOISE_MIN_PASSES


def network_rate(from_model: bool, model: dict[str, Any], rows: int, kind: str) -> bool:
    """Whether a fit trains from scratch on network text of the kind (``coderlm.text.kind``) and size where
    ``NETWORK_LEARNING_RATE`` ranked better than the usual rate."""
    network = (kind == ONNX and rows < NOISE_MAX_ROWS) or (kind == CELL and rows < CELL_MAX_ROWS)
    return from_scratch(from_model, model) and network


def start_config(
    training: dict[str, Any] | None, from_model: bool, model: dict[str, Any], texts: Sequence[str]
) -> tuple[TrainConfig, str]:
    """``training`` as a ``TrainConfig`` with the start's options where it sets none (``start_options``) for a
    fit on ``texts``, and the texts' kind (``coderlm.text.kind.text_kind``)."""
    config = TrainConfig.from_dict(training or {})
    passes = config.steps * config.batch_size / len(texts)
    kind = text_kind(texts)
    start = start_options(training, from_model, model, len(texts), passes, kind, steps=config.steps)
    return dataclasses.replace(config, **start), kind


def start_options(
    training: dict[str, Any] | None,
    from_model: bool,
    model: dict[str, Any],
    rows: int,
    passes: float,
    kind: str = OTHER,
    steps: int = 0,
) -> dict[str, float]:
    """The ``learning_rate``, ``target_noise`` and ``ema_decay`` such a start sets where ``training`` sets none
    (``from_model``: fine-tuning a trained model; ``model``: the model options; ``kind``: the training texts'
    ``coderlm.text.kind.text_kind``; ``steps``: the run's, 0 to leave the average out); an option left out of
    the result keeps ``TrainConfig``'s default."""
    training = training or {}
    start: dict[str, float] = {}
    if "learning_rate" not in training:
        if from_model:
            start["learning_rate"] = FINETUNE_LEARNING_RATE
        elif encoder_finetune(from_model, model):
            start["learning_rate"] = ENCODER_LEARNING_RATE
        elif network_rate(from_model, model, rows, kind):
            start["learning_rate"] = NETWORK_LEARNING_RATE
    if "target_noise" not in training and not small_data(from_model, model, rows, passes):
        start["target_noise"] = 0.0
    if "ema_decay" not in training and from_scratch(from_model, model) and steps >= 2 * EMA_SPAN:
        start["ema_decay"] = 1.0 - EMA_SPAN / steps
    return start
