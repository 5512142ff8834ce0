"""Input tokenizers."""

from coderlm.text.bpe import BPETokenizer, TokenBatch

__all__ = ["BPETokenizer", "TokenBatch"]
