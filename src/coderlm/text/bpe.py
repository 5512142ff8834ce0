"""Input tokenizer: a byte-level BPE vocabulary learned on the training texts.

Built on Hugging Face ``tokenizers``. Byte-level means every string encodes
(no unknown token) and decodes back exactly: whitespace, newlines, indentation
and case are kept, because in code they carry meaning. Digits are split one by
one so numbers in the text are read digit by digit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from coderlm.atomic import write_atomic

PAD, START = "<pad>", "<s>"
PRETOKENIZERS = ("code", "lines", "lines+digits")


def digit_ids_of(tokenizer: Tokenizer, remedy: str) -> list[int]:
    """Ids of ``tokenizer``'s tokens ``0``..``9``; ValueError (ending in ``remedy``) if a token joins a digit
    to anything else (``12``, ``x1``, ``##3``): number values read a number as its run of digit tokens."""
    vocab = tokenizer.get_vocab()
    specials = {t.content for t in tokenizer.get_added_tokens_decoder().values()} | {PAD, START}
    joined = sorted(t for t in vocab if len(t) > 1 and any(c.isdigit() for c in t) and t not in specials)
    if joined or not all(str(d) in vocab for d in range(10)):
        example = f" (e.g. {joined[0]!r})" if joined else ""
        raise ValueError(f"this tokenizer merges digits with other characters{example}; number values need {remedy}")
    return [vocab[str(d)] for d in range(10)]


@dataclasses.dataclass(frozen=True)
class TokenBatch:
    ids: np.ndarray  # (n, T) int64, right-padded with the pad id
    mask: np.ndarray  # (n, T) bool, True on real tokens
    lengths: np.ndarray  # (n,) tokens of each text before truncation
    truncated: int  # texts longer than max_length, cut to it

    def by_length(
        self, batch_size: int, device: str | torch.device = "cpu"
    ) -> Iterator[tuple[np.ndarray, torch.Tensor, torch.Tensor]]:
        """(rows, ids, mask) in batches of similar length (longest first), each trimmed to its longest row:
        little padding. ``rows`` are the batch's indices into this TokenBatch."""
        kept = self.mask.sum(1)
        for rows in length_sorted_batches(kept, batch_size):
            width = max(int(kept[rows].max()), 1)
            ids = torch.from_numpy(self.ids[rows, :width]).to(device)
            yield rows, ids, torch.from_numpy(self.mask[rows, :width]).to(device)


def length_sorted_batches(lengths: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Row indices in batches of similar length (longest first), so batches carry little padding."""
    order = np.argsort(-np.asarray(lengths), kind="stable")
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


class BPETokenizer:
    """Byte-level BPE with digits split; ``<pad>`` is id 0.

    Every encoded text starts with ``<s>`` (id 1): a fixed token that attention
    can always reach, which lets the encoder sense how long the text is.
    """

    pad_id, start_id = 0, 1

    def __init__(self, tokenizer: Tokenizer) -> None:
        if tokenizer.token_to_id(PAD) != self.pad_id or tokenizer.token_to_id(START) != self.start_id:
            raise ValueError(f"tokenizer must have {PAD} as id {self.pad_id} and {START} as id {self.start_id}")
        self.tokenizer = tokenizer

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        vocab_size: int = 4096,
        min_frequency: int = 2,
        pretokenize: str = "code",
        specials: Sequence[str] = (),
    ) -> BPETokenizer:
        """Learn merges from ``texts`` until ``vocab_size`` tokens or no pair occurs ``min_frequency`` times.

        ``specials``: further special tokens after ``<pad>`` and ``<s>`` (ids 2, 3, ...), e.g. pretraining's
        ``<mask>``.

        ``pretokenize`` sets where merges may not cross:

        * ``"code"`` (default): word, punctuation and whitespace boundaries, and every
          digit on its own; numbers in the text are read digit by digit.
        * ``"lines"``: only line ends; merges may span punctuation and digits, so the
          recurring pieces of machine-written text (``[1,16,32,32]``, ``= Conv[pads=``)
          become single tokens. Much shorter for ONNX text.
        * ``"lines+digits"``: line ends, and every digit on its own: the boilerplate of a line
          still merges, but a number is read digit by digit, never as a token of its own
          (generated kernels: a size not seen in training is not an unknown token).
        """
        if vocab_size < 259:
            raise ValueError(f"vocab_size must be >= 259 (256 bytes, <pad>, <s> and one merge), got {vocab_size}")
        if pretokenize not in PRETOKENIZERS:
            raise ValueError(f"pretokenize must be one of {PRETOKENIZERS}, got {pretokenize!r}")
        tokenizer = Tokenizer(models.BPE())
        if pretokenize == "code":
            tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
                [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
            )
        else:
            digits = [pre_tokenizers.Digits(individual_digits=True)] if pretokenize == "lines+digits" else []
            tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
                [
                    pre_tokenizers.Split("\n", behavior="merged_with_previous"),
                    *digits,
                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
                ]
            )
        tokenizer.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            special_tokens=[PAD, START, *specials],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        tokenizer.train_from_iterator(texts, trainer=trainer)
        return cls(tokenizer)

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size()

    def digit_ids(self) -> list[int]:
        """Ids of the tokens ``0``..``9``; ValueError if any token joins a digit to something else (the
        ``lines`` pre-tokenizer), since a number must then be read as a string of digit tokens."""
        return digit_ids_of(self.tokenizer, "pretokenize 'code' or 'lines+digits'")

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, ``<s>`` first, untruncated."""
        return [[self.start_id, *e.ids] for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def encode(self, texts: Sequence[str], max_length: int) -> TokenBatch:
        """Pad to the longest text (at most ``max_length``); longer texts keep their first tokens."""
        encoded = self.tokenize(texts)
        lengths = np.array([len(e) for e in encoded], dtype=np.int64)
        width = int(min(max(lengths.max(initial=1), 1), max_length))
        ids = np.full((len(encoded), width), self.pad_id, dtype=np.int64)
        for row, tokens in enumerate(encoded):
            kept = tokens[:width]
            ids[row, : len(kept)] = kept
        mask = np.arange(width)[None, :] < np.minimum(lengths, width)[:, None]
        return TokenBatch(ids, mask, lengths, int((lengths > max_length).sum()))

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode([i for i in ids if i not in (self.pad_id, self.start_id)])

    def save(self, path: str | Path) -> None:
        """Write the tokenizer as one JSON file, atomically."""
        write_atomic(path, self.tokenizer.to_str(pretty=True))

    @classmethod
    def load(cls, path: str | Path) -> BPETokenizer:
        return cls(Tokenizer.from_file(str(path)))
