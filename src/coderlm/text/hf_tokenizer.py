"""A pretrained encoder's own tokenizer, and structure markers for tokenizers that lose layout.

Uncased WordPiece tokenizers (BERT, MiniLM) lowercase and drop newlines and
indentation: ``if x:\\n    return 1`` reads as ``if x : return 1``. With
``structure=True`` the text is first rewritten reversibly (``mark_structure``):

* every newline becomes ``¶``;
* leading indentation becomes ``»`` per 4 spaces and ``→`` per tab (other leading spaces stay);
* a literal ``¶``, ``»``, ``→`` or ``§`` in the text is escaped as ``§`` + the character.

These characters are single tokens of BERT's vocabulary, so the encoder sees line
breaks and depth. ``unmark_structure`` inverts the rewrite exactly.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from coderlm.atomic import write_atomic
from coderlm.text.bpe import TokenBatch, digit_ids_of

NEWLINE, INDENT, TAB, ESCAPE = "¶", "»", "→", "§"
MARKERS = {NEWLINE: "\n", INDENT: "    ", TAB: "\t"}
SETTINGS_FILE = "tokenizer_settings.json"
# layout_markers: "auto" marks layout only if the tokenizer loses it; "always" / "never"
LAYOUT_MARKERS = {"auto": None, "always": True, "never": False}


def mark_structure(text: str) -> str:
    """Rewrite newlines and leading indentation as marker characters (reversible)."""
    out = []
    for number, line in enumerate(text.split("\n")):
        if number:
            out.append(NEWLINE)
        body = line.lstrip(" \t")
        leading, spaces = [], 0
        for char in line[: len(line) - len(body)]:
            if char == " ":
                spaces += 1
                if spaces == 4:
                    leading.append(INDENT)
                    spaces = 0
                continue
            leading.append(" " * spaces + TAB)
            spaces = 0
        out.append("".join(leading) + " " * spaces)
        out.append("".join(ESCAPE + c if c in MARKERS or c == ESCAPE else c for c in body))
    return "".join(out)


def unmark_structure(marked: str) -> str:
    """Inverse of ``mark_structure``."""
    out, i = [], 0
    while i < len(marked):
        char = marked[i]
        if char == ESCAPE and i + 1 < len(marked):
            out.append(marked[i + 1])
            i += 2
            continue
        out.append(MARKERS.get(char, char))
        i += 1
    return "".join(out)


def loses_layout(tokenizer: Tokenizer) -> bool:
    """Whether ``tokenizer`` drops newlines or indentation (decoding does not give them back)."""
    probe = "a\n    b"
    return "\n" not in tokenizer.decode(tokenizer.encode(probe).ids, skip_special_tokens=True)


class PretrainedTokenizer:
    """A Hugging Face fast tokenizer (its ``tokenizers`` backend) with the encoder's special tokens.

    Encoded texts get the tokenizer's own specials (``[CLS] ... [SEP]``, ``... </s>``);
    a truncated text keeps its closing special token.
    """

    def __init__(self, tokenizer: Tokenizer, pad_id: int, structure: bool) -> None:
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self.tokenizer, self.pad_id, self.structure = tokenizer, pad_id, structure

    @classmethod
    def from_folder(cls, folder: str | Path, structure: bool | None = None) -> PretrainedTokenizer:
        """The tokenizer saved with a Hugging Face model; ``structure=None`` marks layout only if it is lost."""
        folder = Path(folder)
        if (folder / "tokenizer.json").is_file():
            backend = Tokenizer.from_file(str(folder / "tokenizer.json"))
        else:  # slow-tokenizer files only: let transformers convert them (still local files only)
            from transformers import AutoTokenizer

            backend = AutoTokenizer.from_pretrained(folder, local_files_only=True).backend_tokenizer
        pad_id = _pad_id(folder, backend)
        if structure is None:
            structure = loses_layout(backend)
        return cls(backend, pad_id, structure)

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size()

    def digit_ids(self) -> list[int]:
        """Ids of the tokens ``0``..``9`` (number values); ValueError if the vocabulary joins digits."""
        return digit_ids_of(self.tokenizer, "an encoder whose tokenizer splits digits (coderlm pretrain's does)")

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        texts = [mark_structure(t) for t in texts] if self.structure else list(texts)
        return [e.ids for e in self.tokenizer.encode_batch(texts, add_special_tokens=True)]

    def encode(self, texts: Sequence[str], max_length: int) -> TokenBatch:
        encoded = self.tokenize(texts)
        lengths = np.array([len(e) for e in encoded], dtype=np.int64)
        width = int(min(max(lengths.max(initial=1), 1), max_length))
        ids = np.full((len(encoded), width), self.pad_id, dtype=np.int64)
        specials = set(self.tokenizer.get_added_tokens_decoder())
        for row, tokens in enumerate(encoded):
            kept = tokens[:width]
            if len(tokens) > width and tokens[-1] in specials:
                kept = [*kept[:-1], tokens[-1]]
            ids[row, : len(kept)] = kept
        mask = np.arange(width)[None, :] < np.minimum(lengths, width)[:, None]
        return TokenBatch(ids, mask, lengths, int((lengths > max_length).sum()))

    def decode(self, ids: Sequence[int]) -> str:
        text = self.tokenizer.decode([int(i) for i in ids if i != self.pad_id], skip_special_tokens=True)
        return unmark_structure(text) if self.structure else text

    def save(self, path: str | Path) -> None:
        """``tokenizer.json`` at ``path``, and its settings beside it."""
        path = Path(path)
        write_atomic(path, self.tokenizer.to_str(pretty=True))
        write_atomic(path.parent / SETTINGS_FILE, json.dumps(self.settings()) + "\n")

    def settings(self) -> dict:
        return {"kind": "pretrained", "pad_id": self.pad_id, "structure": self.structure}

    @classmethod
    def load(cls, path: str | Path) -> PretrainedTokenizer:
        path = Path(path)
        settings = json.loads((path.parent / SETTINGS_FILE).read_text())
        return cls(Tokenizer.from_file(str(path)), int(settings["pad_id"]), bool(settings["structure"]))


def _pad_id(folder: Path, backend: Tokenizer) -> int:
    """The padding token's id from tokenizer_config.json / special_tokens_map.json, else 0."""
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        file = folder / name
        if file.is_file():
            pad = json.loads(file.read_text()).get("pad_token")
            pad = pad.get("content") if isinstance(pad, dict) else pad
            if pad is not None and backend.token_to_id(pad) is not None:
                return backend.token_to_id(pad)
    return 0
