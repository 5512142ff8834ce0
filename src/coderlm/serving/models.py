"""The models a server holds: each loaded once, named, described for ``GET /v1/models``, and sampled.

``--model RUN`` names a model by its folder (``runs/a`` -> ``a``); ``--model NAME=RUN`` names it.
A request without ``model`` goes to the first one given. ``ServedModel.sample`` is the one call a
model's worker makes: a seeded call is exactly ``RegressionLM.load(RUN).sample(texts, num_samples,
seed=seed)``; an unseeded one may decode more inputs per forward pass (``ServeConfig.batch_size``).
"""

from __future__ import annotations

import copy
import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from coderlm.estimator import RegressionLM

log = logging.getLogger("coderlm")

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
# Where an evaluation report's metrics.json is looked for, relative to the model folder, in order:
# beside the model, in its report/ folder, or the quickstart's layout (runs/quickstart/{model,report}).
EVALUATION_FILES = ("metrics.json", "report/metrics.json", "../report/metrics.json")


def model_specs(specs: Sequence[str]) -> list[tuple[str, Path]]:
    """``RUN`` or ``NAME=RUN`` -> (name, folder); an unnamed model is named by its folder. Names are unique."""
    if not specs:
        raise ValueError("no model given")
    named: list[tuple[str, Path]] = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not NAME.fullmatch(name) or Path(spec).exists():
            name, path = Path(spec).resolve().name, spec
        if not NAME.fullmatch(name):
            raise ValueError(f"model {spec!r}: name it with NAME=RUN (letters, digits, '_', '.', '-')")
        if name in (n for n, _ in named):
            raise ValueError(f"model name {name!r} is given twice; name the models with NAME=RUN")
        named.append((name, Path(path)))
    return named


class ServedModel:
    """A trained model loaded for serving. ``batch_size`` > 0: inputs per forward pass in unseeded calls."""

    def __init__(self, name: str, path: str | Path, batch_size: int = 0, device: str = "cpu") -> None:
        self.name, self.path = name, Path(path)
        self.rlm = RegressionLM.load(self.path, device=device)
        self.batched = self.rlm
        if batch_size and batch_size != self.rlm.batch_size:
            self.batched = copy.copy(self.rlm)  # shares the network, tokenizer and codec; only batch_size differs
            self.batched.batch_size = batch_size

    @property
    def objectives(self) -> list[str]:
        return self.rlm.objectives_

    def sample(self, texts: list[str], num_samples: int, seed: int | None) -> np.ndarray:
        """Float64 samples (n, num_samples, k); seeded: exactly what the loaded model gives in process.
        ``num_samples`` 0: the exact median alone, as one sample (n, 1, k) (``predict(point="exact")``)."""
        if num_samples == 0:
            return self.batched.predict(texts, point="exact")[:, None, :]
        if seed is not None:
            return self.rlm.sample(texts, num_samples, seed=seed)
        return self.batched.sample(texts, num_samples)

    def info(self) -> dict[str, Any]:
        """What ``GET /v1/models`` says of this model; files it cannot read are left out (and logged)."""
        rlm = self.rlm
        report = dict(rlm.fit_report_)
        report.pop("val_losses", None)  # the validation curve: long, and in metrics.jsonl
        info: dict[str, Any] = {
            "name": self.name,
            "path": str(self.path),
            "objectives": self.objectives,
            "number_format": rlm.codec_.format.to_dict(),
            "specials": list(rlm.codec_.specials),
            "num_samples": rlm.num_samples,
            "temperature": rlm.temperature,
            "max_input_len": rlm.max_input_len,
            "batch_size": self.batched.batch_size,
            "parameters": sum(p.numel() for p in rlm.network_.parameters()),
            "training": report,
        }
        summary = _read_json(self.path / "train_summary.json")
        if summary is not None:
            summary.pop("fit_report", None)  # the same as "training"
            info["train_summary"] = summary
        for name in EVALUATION_FILES:
            metrics = _read_json(self.path / name)
            if metrics is not None:
                info["evaluation"] = {"path": str(self.path / name), "metrics": metrics}
                break
        return info


def load_models(specs: Sequence[str], batch_size: int = 0, device: str = "cpu") -> dict[str, ServedModel]:
    """Each ``RUN`` / ``NAME=RUN`` loaded, by name, in the order given (the first is the default)."""
    return {name: ServedModel(name, path, batch_size, device) for name, path in model_specs(specs)}


def _read_json(path: Path) -> dict | None:
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        log.warning("%s: not read (%s)", path, exc)
        return None
    return value if isinstance(value, dict) else None
