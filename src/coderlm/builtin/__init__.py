"""Trained models shipped inside the package, usable wherever a model folder is: ``builtin:<name>``.

    coderlm predict --model builtin:nb201 net.onnx
    coderlm train --init builtin:nb201 --data my_device.jsonl --out runs/mine
    RegressionLM.load("builtin:nb201")

Each is a folder beside this module (``config.json``, fp16 ``model.safetensors``, ``tokenizer.json``,
``MODEL_CARD.md``: what it predicts, its training command and data, its test figures).
"""

from __future__ import annotations

from pathlib import Path

PREFIX = "builtin:"
HERE = Path(__file__).resolve().parent


def builtin_names() -> list[str]:
    """The shipped models."""
    return sorted(p.name for p in HERE.iterdir() if (p / "config.json").is_file())


def model_folder(path: str | Path) -> Path:
    """``path`` as a folder; ``builtin:<name>`` is the shipped model's folder (an unknown name is an error)."""
    text = str(path)
    if not text.startswith(PREFIX):
        return Path(path)
    name = text[len(PREFIX) :]
    folder = HERE / name
    if not (folder / "config.json").is_file():
        known = ", ".join(PREFIX + n for n in builtin_names()) or "none"
        raise FileNotFoundError(f"{text}: no such built-in model; built-in models: {known}")
    return folder
