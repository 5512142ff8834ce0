"""The pretrained encoder as a Hugging Face model folder, so every path that takes an encoder takes it.

The network is ``transformers.BertForMaskedLM`` (a well-kept, standard encoder; SDPA attention):
the body is what ``ModelConfig.encoder = FOLDER`` loads (``model/hf_encoder.py``: frozen, with the
encoder cache, or trained), the masked-token head only serves pretraining and stays in the folder
so pretraining can go on. The tokenizer is coderlm's byte-level BPE (``text/bpe.py``: whitespace and
case kept, digits one by one) with ``<mask>`` added and a post-processor that puts ``<s>`` first,
saved as ``tokenizer.json`` with ``tokenizer_config.json`` naming its padding and mask tokens.

A folder is written as a saved model is: every file under a temporary name renamed into place,
``config.json`` last, so a folder with it is complete.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from coderlm.atomic import write_atomic
from coderlm.model.hf_encoder import quiet_transformers
from coderlm.pretraining.config import PretrainConfig
from coderlm.pretraining.masking import IGNORE
from coderlm.text.bpe import PAD, START, BPETokenizer

MASK = "<mask>"
RECORD_FILE = "pretrain.json"  # the recipe, the corpus summary and the figures, beside the weights


def masked_lm(config: PretrainConfig, vocab_size: int, pad_id: int) -> nn.Module:
    """A freshly initialised ``BertForMaskedLM`` of ``config``'s size."""
    import transformers

    bert = transformers.BertConfig(
        vocab_size=vocab_size,
        hidden_size=config.hidden_size,
        num_hidden_layers=config.layers,
        num_attention_heads=config.heads,
        intermediate_size=config.intermediate_size,
        max_position_embeddings=config.max_len,
        type_vocab_size=1,
        pad_token_id=pad_id,
        hidden_dropout_prob=config.dropout,
        attention_probs_dropout_prob=config.dropout,
    )
    bert._attn_implementation = "sdpa"
    return transformers.BertForMaskedLM(bert)


class MaskedLMLoss(nn.Module):
    """The trainer's objective: cross-entropy of the hidden tokens only (the head runs on those alone,
    not on every position: (B, T, V) logits would dominate the step's memory and time)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        states = self.model.bert(input_ids=batch["ids"], attention_mask=batch["mask"].long()).last_hidden_state
        hidden = batch["labels"] != IGNORE
        logits = self.model.cls(states[hidden])
        return F.cross_entropy(logits.float(), batch["labels"][hidden])


def hf_tokenizer_json(tokenizer: BPETokenizer) -> str:
    """``tokenizer`` as a Hugging Face fast tokenizer file whose encoding adds ``<s>`` first."""
    from tokenizers import Tokenizer, processors

    backend = Tokenizer.from_str(tokenizer.tokenizer.to_str())
    backend.post_processor = processors.TemplateProcessing(
        single=f"{START} $A", special_tokens=[(START, tokenizer.start_id)]
    )
    return backend.to_str(pretty=True)


def save_encoder(folder: Path, model: nn.Module, tokenizer: BPETokenizer, record: dict[str, Any]) -> Path:
    """The model folder: weights, tokenizer files, ``pretrain.json``, then ``config.json``."""
    staging = folder / ".saving"
    shutil.rmtree(staging, ignore_errors=True)
    with quiet_transformers():
        model.save_pretrained(staging)
    write_atomic(folder / "tokenizer.json", hf_tokenizer_json(tokenizer))
    special = {"pad_token": PAD, "bos_token": START, "mask_token": MASK, "tokenizer_class": "PreTrainedTokenizerFast"}
    write_atomic(folder / "tokenizer_config.json", json.dumps(special, indent=2) + "\n")
    write_atomic(folder / RECORD_FILE, json.dumps(record, indent=2) + "\n")
    for name in sorted(p.name for p in staging.iterdir() if p.name != "config.json"):
        (staging / name).replace(folder / name)
    (staging / "config.json").replace(folder / "config.json")
    staging.rmdir()
    return folder
