"""A ``RegressionLM``'s folder: what ``save`` writes and ``load`` reads back (``model.files`` does the files).

The record keeps the constructor's options as JSON (the device is chosen again on load), the decoded
objectives, the fitted parts, a conformal calibration if there is one and the readouts (``coderlm.readout``).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from coderlm.builtin import model_folder
from coderlm.decoding.calibration import Calibration
from coderlm.devices import resolve_device
from coderlm.model.files import CONFIG_FILE, SavedModel, read_model, write_model
from coderlm.model.hf_encoder import is_encoder_folder
from coderlm.numbers.formats import format_from_dict
from coderlm.readout import Readout


def write_estimator(rlm, path: Path) -> Path:
    """``rlm``'s fitted state into folder ``path``; other files there are kept."""
    calibration = rlm.calibration_.to_dict() if getattr(rlm, "calibration_", None) else None
    decoded = rlm.decoded_objectives_
    readouts = [r.to_dict(decoded) for r in rlm.readouts_]
    fitted = (rlm.network_, rlm.tokenizer_, rlm.codec_, rlm.fit_report_, calibration, readouts)
    return write_model(path, type(rlm).__name__, SavedModel(params_record(rlm.get_params()), decoded, *fitted))


def read_estimator(cls: type, path: str | Path, device: str):
    """A ``cls`` fitted as saved in ``path`` (or ``builtin:<name>``); errors name the missing or bad file."""
    shown, path = path, model_folder(path)
    if is_encoder_folder(path):
        raise ValueError(
            f"{shown}: a pretrained encoder, not a trained model (it writes no numbers): fine-tune one from it "
            f"with 'coderlm train --init {shown}' (or fit(init=...))"
        )
    saved = read_model(path, cls.__name__, resolve_device(device))
    params = saved.params | {"specials": tuple(saved.params.get("specials", ())), "device": device}
    if params.get("number_format") is not None:
        params["number_format"] = format_from_dict(params["number_format"])
    try:
        rlm = cls(**params)
    except TypeError as exc:
        raise ValueError(f"{path / CONFIG_FILE}: {exc}") from exc
    rlm.network_, rlm.tokenizer_, rlm.codec_ = saved.network, saved.tokenizer, saved.codec
    try:
        rlm.readouts_ = [Readout.from_dict(spec, saved.objectives) for spec in saved.readouts]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path / CONFIG_FILE}: readouts: {exc}") from exc
    rlm.objectives_ = saved.objectives + [r.name for r in rlm.readouts_]
    rlm.fit_report_ = saved.fit_report
    if saved.calibration is not None:
        rlm.calibration_ = Calibration.from_dict(saved.calibration)
    return rlm


def constructor_params(cls: type) -> list[str]:
    """The names ``__init__`` takes: what ``get_params`` returns and the record keeps."""
    return [name for name in inspect.signature(cls.__init__).parameters if name != "self"]


def run_folder(run_dir: str | Path | None, resume: bool) -> Path | None:
    """``fit``'s run folder (checkpoints, metrics), if any; resuming needs one."""
    if resume and run_dir is None:
        raise ValueError("resume=True needs run_dir")
    return Path(run_dir) if run_dir is not None else None


def params_record(params: dict[str, Any]) -> dict[str, Any]:
    """Constructor arguments as JSON, without the device (chosen again on load)."""
    params = dict(params)
    del params["device"]
    number_format = params["number_format"]
    return params | {
        "number_format": number_format.to_dict() if number_format is not None else None,
        "specials": list(params["specials"]),
    }


def init_estimator(cls: type, init):
    """The fitted model to fine-tune from: ``init`` itself (a fitted ``cls``), or loaded from its folder."""
    if isinstance(init, cls):
        init._check_fitted()
        return init
    if not isinstance(init, (str, Path)):
        raise ValueError(f"init must be a saved model folder or a fitted {cls.__name__}, got {type(init).__name__}")
    if not (model_folder(init) / CONFIG_FILE).is_file():
        raise FileNotFoundError(
            f"init={str(init)!r} holds no trained model ({CONFIG_FILE} is missing; "
            "a run folder has one once its training has finished)"
        )
    return cls.load(init)
