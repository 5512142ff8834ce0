"""Input tokenizers: a byte-level BPE learned on the training texts (``bpe``), or a pretrained
encoder's own tokenizer with optional layout markers (``hf_tokenizer``)."""

from __future__ import annotations

from pathlib import Path

from coderlm.text.bpe import BPETokenizer, TokenBatch
from coderlm.text.hf_tokenizer import SETTINGS_FILE, PretrainedTokenizer


def load_tokenizer(path: str | Path) -> BPETokenizer | PretrainedTokenizer:
    """The tokenizer saved at ``path``: a pretrained encoder's (settings file beside it) or a learned BPE."""
    path = Path(path)
    return PretrainedTokenizer.load(path) if (path.parent / SETTINGS_FILE).is_file() else BPETokenizer.load(path)


__all__ = ["BPETokenizer", "PretrainedTokenizer", "TokenBatch", "load_tokenizer"]
