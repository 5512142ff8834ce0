"""Tiny randomly initialised Hugging Face model folders (BERT, T5Gemma) with a WordPiece tokenizer: no downloads."""

from __future__ import annotations

from pathlib import Path

import torch


def write_wordpiece(folder: Path) -> None:
    """A tiny uncased WordPiece tokenizer (BERT's pipeline) with [CLS] ... [SEP] around each text."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    symbols = list("abcdefghijklmnopqrstuvwxyz0123456789=+-*/()[]:,.#_¶»→§")
    vocab = {
        t: i
        for i, t in enumerate(
            ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *symbols, *("##" + s for s in symbols[:36])]
        )
    }
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tokenizer.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text('{"pad_token": "[PAD]"}')


def make_bert(folder: Path, seed: int = 0) -> Path:
    import transformers

    torch.manual_seed(seed)
    config = transformers.BertConfig(
        vocab_size=99,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    transformers.BertModel(config).save_pretrained(folder)
    write_wordpiece(folder)
    return folder


def make_t5gemma(folder: Path, seed: int = 0) -> Path:
    """A whole encoder-decoder checkpoint, as downloaded T5Gemma weights are: coderlm takes the encoder half."""
    import transformers
    from transformers.models.t5gemma.configuration_t5gemma import T5GemmaModuleConfig

    half = dict(
        vocab_size=99,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        query_pre_attn_scalar=8,
        sliding_window=16,
    )
    config = transformers.T5GemmaConfig(
        encoder=T5GemmaModuleConfig(**half), decoder=T5GemmaModuleConfig(**half), vocab_size=99
    )
    torch.manual_seed(seed)
    transformers.T5GemmaModel(config).save_pretrained(folder)
    write_wordpiece(folder)
    return folder
