"""A saved model on disk: ``config.json`` + ``model.safetensors`` + ``tokenizer.json`` in one folder.

``config.json`` holds the estimator's record (kind, options, objectives, number codec, fit
report) and the network's config; a pretrained encoder adds its Hugging Face config (to rebuild
it) and, when frozen (its weights are not saved), a hash of its weights, checked on load. Each
file is written under a temporary name and renamed into place, ``config.json`` last: a folder
with it is a complete model. Nothing is pickled.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from safetensors.torch import load_file
from safetensors.torch import save as safetensors_bytes

from coderlm import __version__
from coderlm.atomic import write_atomic
from coderlm.model.config import ModelConfig
from coderlm.model.hf_encoder import PretrainedEncoder
from coderlm.model.transformer import EncoderDecoder
from coderlm.numbers.codec import NumberCodec
from coderlm.text import BPETokenizer, PretrainedTokenizer, load_tokenizer
from coderlm.text.hf_tokenizer import SETTINGS_FILE

CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE = "config.json", "model.safetensors", "tokenizer.json"
CALIBRATION_FILE = "calibration.json"  # optional: conformal scores from ``coderlm calibrate``


def save_tokenizer(folder: Path, tokenizer: BPETokenizer | PretrainedTokenizer) -> None:
    """``tokenizer.json`` (a resumed run reads it back before any weights exist)."""
    tokenizer.save(folder / TOKENIZER_FILE)
    if isinstance(tokenizer, BPETokenizer):
        (folder / SETTINGS_FILE).unlink(missing_ok=True)  # a pretrained tokenizer's settings, from an older save


@dataclasses.dataclass
class SavedModel:
    """What a model folder holds: the estimator's options (as JSON) and its fitted parts."""

    params: dict[str, Any]
    objectives: list[str]
    network: EncoderDecoder
    tokenizer: BPETokenizer | PretrainedTokenizer
    codec: NumberCodec
    fit_report: dict[str, Any]
    calibration: dict[str, Any] | None = None  # ``decoding.calibration.Calibration.to_dict()``
    readouts: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # ``readout.Readout.to_dict()``


def write_model(folder: Path, kind: str, saved: SavedModel) -> Path:
    """The tokenizer, the weights, then ``config.json`` (last: a folder with it is complete)."""
    save_tokenizer(folder, saved.tokenizer)
    record = {
        "coderlm_version": __version__,
        "kind": kind,
        "params": saved.params,
        "objectives": saved.objectives,
        **network_record(saved.network),
        "codec": saved.codec.to_dict(),
        "fit_report": saved.fit_report,
        **({"readouts": saved.readouts} if saved.readouts else {}),
    }
    state = {k: v.detach().cpu().contiguous() for k, v in saved.network.state_dict().items()}
    write_atomic(folder / WEIGHTS_FILE, safetensors_bytes(state))
    write_calibration(folder, saved.calibration)  # a calibration of an earlier model would not hold
    write_atomic(folder / CONFIG_FILE, json.dumps(record, indent=2) + "\n")
    return folder


def write_calibration(folder: Path, calibration: dict[str, Any] | None) -> None:
    """``calibration.json`` beside the model, or none."""
    if calibration is None:
        (folder / CALIBRATION_FILE).unlink(missing_ok=True)
    else:
        write_atomic(folder / CALIBRATION_FILE, json.dumps(calibration) + "\n")


def read_model(folder: Path, kind: str, device: str) -> SavedModel:
    """A saved ``kind``, its network on ``device`` in eval mode; errors name the missing or bad file."""
    record = read_record(folder, kind)
    try:
        params, objectives = dict(record["params"]), list(record["objectives"])
        codec = NumberCodec.from_dict(record["codec"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{folder / CONFIG_FILE}: {exc}") from exc
    network = read_network(folder, record, device)
    calibration = None
    if (folder / CALIBRATION_FILE).is_file():
        try:
            calibration = json.loads((folder / CALIBRATION_FILE).read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{folder / CALIBRATION_FILE}: {exc}") from exc
    fitted = (network, read_tokenizer(folder), codec, record.get("fit_report", {}), calibration)
    return SavedModel(params, objectives, *fitted, readouts=list(record.get("readouts", [])))


def network_record(network: EncoderDecoder) -> dict[str, Any]:
    """What rebuilds ``network``: its config, and a pretrained encoder's config and weights' hash."""
    record: dict[str, Any] = {"model": network.cfg.to_dict()}
    encoder = network.encoder
    if isinstance(encoder, PretrainedEncoder):
        record["encoder_config"] = encoder.hf_config
        if encoder.frozen:
            record["encoder_weights_sha256"] = encoder.weights_hash()
    return record


def read_record(folder: Path, kind: str) -> dict[str, Any]:
    """``config.json`` of a saved ``kind``; errors name the missing or bad file."""
    for name in (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{folder / name} is missing: not a saved coderlm model")
    try:
        record = json.loads((folder / CONFIG_FILE).read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{folder / CONFIG_FILE}: {exc}") from exc
    if record.get("kind") != kind:
        raise ValueError(f"{folder / CONFIG_FILE}: holds a {record.get('kind')!r}, not a {kind}")
    return record


def read_network(folder: Path, record: dict[str, Any], device: str) -> EncoderDecoder:
    """The network of a saved model, weights loaded, in eval mode on ``device``."""
    try:
        network = EncoderDecoder(ModelConfig.from_dict(record["model"]), record.get("encoder_config"))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{folder / CONFIG_FILE}: {exc}") from exc
    network.load_state_dict(load_file(str(folder / WEIGHTS_FILE)))
    expected = record.get("encoder_weights_sha256")
    if expected is not None and network.encoder.weights_hash() != expected:
        raise ValueError(
            f"{folder}: the frozen encoder {network.cfg.encoder!r} is not the one this model was "
            "trained on (its weights changed); restore that encoder"
        )
    return network.to(device).eval()


def read_tokenizer(folder: Path) -> BPETokenizer | PretrainedTokenizer:
    return load_tokenizer(folder / TOKENIZER_FILE)
