"""The encoder an RLM row starts from, as ``bench/programs.py --encoders`` names it.

- ``scratch``: the RLM's own encoder, trained with it;
- ``FOLDER``: a pretrained encoder (``coderlm pretrain``'s output, or ``builtin:python-encoder``),
  fine-tuned under a new number decoder (``fit(init=FOLDER)``);
- ``untrained:FOLDER``: the same architecture and tokenizer with freshly initialised weights, trained
  exactly as the fine-tuned row: the control that separates what pretraining taught from what the
  encoder's size and BPE bring;
- ``frozen:FOLDER``: the pretrained encoder frozen, its states cached, only the number decoder trained;
- ``FOLDER`` holding a trained coderlm model (``coderlm train``'s ``model/``): the whole RLM fine-tuned,
  encoder and number decoder (``fit(init=FOLDER)``), e.g. one trained on another corpus's labels.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import torch

from coderlm.builtin import model_folder
from coderlm.model.hf_encoder import is_encoder_folder

LABELS = {
    "pretrained": " (pretrained encoder)",
    "untrained": " (pretrained encoder's size and BPE, untrained)",
    "frozen": " (pretrained encoder, frozen)",
    "model": " (fine-tuned from a trained RLM)",
}


def encoder_family(spec: str) -> tuple[str, str | None]:
    """An ``--encoders`` entry as (kind, folder)."""
    if spec == "scratch":
        return "scratch", None
    for kind in ("untrained", "frozen"):
        if spec.startswith(kind + ":"):
            return kind, str(model_folder(spec.removeprefix(kind + ":")))
    folder = str(model_folder(spec))  # builtin:<name> is the shipped folder
    if not Path(folder).is_dir():
        raise SystemExit(f"--encoders {spec!r}: neither scratch, untrained:DIR, frozen:DIR nor a folder")
    if (Path(folder) / "config.json").is_file() and not is_encoder_folder(folder):
        return "model", folder  # a saved coderlm model
    return "pretrained", folder


def family_options(kind: str, folder: str | None, model: dict, dim: int, init_learning_rate: float) -> tuple:
    """(model options, training options over the bench's) of a family: fine-tuned encoders (pretrained or
    the untrained control) at ``init_learning_rate``; a frozen one under a decoder of width ``dim``, cached."""
    if kind in ("pretrained", "untrained", "model"):
        return model, {"learning_rate": init_learning_rate}
    if kind == "frozen":
        return {"encoder": folder, "decoder_dim": dim, "dropout": 0.1}, {"encoder_cache": "memory"}
    return model, {}


@contextlib.contextmanager
def starting_point(kind: str, folder: str | None, seed: int) -> Iterator[str | None]:
    """What ``fit(init=...)`` takes for this family and seed: the pretrained folder, a temporary untrained
    copy of it (removed afterwards), or None (scratch, frozen)."""
    if kind != "untrained":
        yield folder if kind in ("pretrained", "model") else None
        return
    with tempfile.TemporaryDirectory(prefix="untrained-encoder-") as out:
        yield untrained_copy(folder, seed, out)


def untrained_copy(folder: str, seed: int, out: str) -> str:
    """``out`` made an encoder folder with ``folder``'s architecture and tokenizer but freshly initialised
    weights."""
    import transformers

    config = transformers.AutoConfig.from_pretrained(folder)
    torch.manual_seed(seed)
    model = transformers.AutoModelForMaskedLM.from_config(config)
    model.save_pretrained(out)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(Path(folder) / name, Path(out) / name)
    return out
