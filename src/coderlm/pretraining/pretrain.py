"""``pretrain``: unlabelled text -> an encoder (and its tokenizer) that RLMs start from.

The objective is masked-span denoising of an encoder alone (``masking.py``), not T5's span
corruption of a whole encoder-decoder. What a pretrained model gives an RLM is its encoder and
tokenizer: the RLM's decoder writes number tokens, so a text decoder trained to write spans back
would be thrown away, and on a CPU budget it would take about half of every step (a second stack
and its cross-attention). Denoising the encoder alone spends the whole budget on what transfers.

Pipeline: read the corpus (``corpus.py``), learn one BPE over all of it, cut every document into
windows of ``max_len`` tokens (``<s>`` first), hold out ``val_share`` of the documents, and train
with coderlm's own loop (``training.Trainer``: checkpoints and exact resume, moving average,
DDP under torchrun, progress and ``metrics.jsonl``). The run folder is then a Hugging Face model
folder (``encoder.py``): ``coderlm train --init FOLDER`` fine-tunes it under a fresh number
decoder, ``--encoder FOLDER`` uses it frozen (with ``--encoder-cache``).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from coderlm import __version__
from coderlm.atomic import write_atomic
from coderlm.pretraining.config import TRAINING_DEFAULTS, PretrainConfig
from coderlm.pretraining.corpus import read_corpus
from coderlm.pretraining.encoder import MASK, MaskedLMLoss, hf_tokenizer_json, masked_lm, save_encoder
from coderlm.pretraining.masking import IGNORE, mask_spans
from coderlm.text.bpe import BPETokenizer
from coderlm.training.config import TrainConfig
from coderlm.training.sampling import BatchSampler
from coderlm.training.trainer import Trainer

MIN_WINDOW = 8  # a document's last window shorter than this (and not the whole document) is dropped
VAL_WINDOWS = 512  # at most this many held-out windows are scored at each validation


@dataclasses.dataclass
class Windows:
    """Token windows, stored flat: window i is ``tokens[offsets[i]:offsets[i + 1]]`` (``<s>`` first)."""

    tokens: np.ndarray  # int32
    offsets: np.ndarray  # int64, len = windows + 1

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def padded(self, rows: Sequence[int], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids, real) of ``rows``, right-padded to the longest of them."""
        lengths = self.lengths[rows]
        ids = np.full((len(rows), int(lengths.max())), pad_id, dtype=np.int64)
        for i, row in enumerate(rows):
            ids[i, : lengths[i]] = self.tokens[self.offsets[row] : self.offsets[row + 1]]
        return ids, np.arange(ids.shape[1])[None, :] < lengths[:, None]


def cut_windows(documents: list[list[int]], max_len: int, start_id: int) -> Windows:
    """Each document's tokens in consecutive windows of ``max_len - 1`` tokens, each after ``<s>``."""
    body = max_len - 1
    pieces, offsets = [], [0]
    for tokens in documents:
        for begin in range(0, max(len(tokens), 1), body):
            piece = tokens[begin : begin + body]
            if len(piece) < MIN_WINDOW and begin > 0:
                continue
            pieces.append([start_id, *piece])
            offsets.append(offsets[-1] + len(piece) + 1)
    flat = np.fromiter((t for piece in pieces for t in piece), dtype=np.int32, count=offsets[-1])
    return Windows(flat, np.asarray(offsets, dtype=np.int64))


@dataclasses.dataclass
class PretrainResult:
    folder: Path
    record: dict[str, Any]


def pretrain(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    config: PretrainConfig | dict | None = None,
    training: dict[str, Any] | None = None,
    resume: bool = False,
    device: str = "cpu",
) -> PretrainResult:
    """Pretrain an encoder on the text of ``paths`` (see ``corpus.read_corpus``); ``out`` becomes the run
    folder and then the model folder. ``training``: ``TrainConfig`` options over ``TRAINING_DEFAULTS``."""
    began = time.perf_counter()
    config = config if isinstance(config, PretrainConfig) else PretrainConfig.from_dict(dict(config or {}))
    train_config = TrainConfig.from_dict(TRAINING_DEFAULTS | dict(training or {}))
    out = Path(out)
    if not resume and (out / "checkpoints").exists():
        raise ValueError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    corpus = read_corpus(paths, config.field)
    say(train_config, f"pretraining corpus: {len(corpus.texts)} documents, {corpus.chars / 1e6:.1f} MB")
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer(corpus.texts, config, out, resume, train_config)
    documents = [e.ids for e in tokenizer.tokenizer.encode_batch(corpus.texts, add_special_tokens=False)]
    order = np.random.default_rng(train_config.seed).permutation(len(documents))
    n_val = round(config.val_share * len(documents))
    val_docs, train_docs = sorted(order[:n_val].tolist()), sorted(order[n_val:].tolist())
    train = cut_windows([documents[i] for i in train_docs], config.max_len, tokenizer.start_id)
    val = cut_windows([documents[i] for i in val_docs], config.max_len, tokenizer.start_id) if n_val else None
    say(
        train_config,
        f"{len(train)} training windows, {len(val) if val else 0} validation windows of <= {config.max_len} tokens",
    )

    torch.manual_seed(train_config.seed)
    mask_id = tokenizer.tokenizer.token_to_id(MASK)
    model = masked_lm(config, tokenizer.vocab_size, tokenizer.pad_id)
    masking = Masking(config, tokenizer, mask_id, torch.device(device))
    sampler = BatchSampler.for_config(len(train), train_config, lengths=train.lengths)
    collate = lambda rows: masking.batch(train, rows, [train_config.seed, *rows.tolist()])  # noqa: E731
    val_loss = masking.validation(val, train_config.batch_size) if val is not None and len(val) else None
    trainer = Trainer(
        MaskedLMLoss(model), train_config, sampler, collate, val_loss=val_loss, run_dir=out, device=device
    )
    result = trainer.run(resume=resume)
    record = {
        "coderlm_version": __version__,
        "objective": f"masked-span denoising (rate {config.mask_rate}, mean span {config.mean_span})",
        "pretrain": config.to_dict(),
        "training": train_config.to_dict(),
        "data": [str(p) for p in paths],
        "corpus": corpus.summary() | {"tokens": int(sum(len(d) for d in documents))},
        "windows": {"train": len(train), "val": len(val) if val else 0},
        "result": result.report("loss" if val_loss is not None else None),
        "seconds": round(time.perf_counter() - began, 1),
    }
    if int(os.environ.get("RANK", "0")) == 0:  # under torchrun every rank holds the same weights: one writes
        save_encoder(out, model.cpu(), tokenizer, record)
    return PretrainResult(out, record)


def say(config: TrainConfig, message: str) -> None:
    """A line on stderr between the long steps (with ``progress``, as the progress bar)."""
    if config.progress:
        print(f"coderlm: {message}", file=sys.stderr, flush=True)


def _tokenizer(
    texts: list[str], config: PretrainConfig, folder: Path, resume: bool, train_config: TrainConfig
) -> BPETokenizer:
    """The run's own tokenizer (resume), or one BPE learned over the whole corpus, saved before any weights."""
    saved = folder / "tokenizer.json"
    if resume and saved.is_file():
        return BPETokenizer.load(saved)
    sample = bpe_sample(texts, config.bpe_chars, train_config.seed)
    share = f"{len(sample)} of {len(texts)} documents" if len(sample) < len(texts) else "the corpus"
    say(train_config, f"learning a {config.vocab_size}-token BPE over {share}")
    tokenizer = BPETokenizer.train(sample, config.vocab_size, pretokenize=config.pretokenize, specials=[MASK])
    write_atomic(saved, hf_tokenizer_json(tokenizer))
    return tokenizer


def bpe_sample(texts: list[str], chars: int, seed: int) -> list[str]:
    """Documents in a seeded random order until they hold ``chars`` characters (all of them when ``chars`` is 0
    or the corpus is smaller): a BPE learned on a large sample differs little from one learned on all."""
    if not chars or sum(map(len, texts)) <= chars:
        return texts
    sample, total = [], 0
    for i in np.random.default_rng(seed).permutation(len(texts)):
        sample.append(texts[i])
        total += len(texts[i])
        if total >= chars:
            break
    return sample


class Masking:
    """Turns windows into masked batches: the training collate and the fixed validation set."""

    def __init__(self, config: PretrainConfig, tokenizer: BPETokenizer, mask_id: int, device: torch.device) -> None:
        self.config, self.tokenizer, self.mask_id, self.device = config, tokenizer, mask_id, device

    def batch(self, windows: Windows, rows: Sequence[int], seed: Any) -> dict[str, torch.Tensor]:
        """Rows' windows, span-masked by a generator seeded with ``seed`` (a batch is a function of its rows)."""
        ids, real = windows.padded(rows, self.tokenizer.pad_id)
        maskable = real & (ids != self.tokenizer.start_id)
        inputs, labels = mask_spans(
            ids,
            maskable,
            np.random.default_rng(seed),
            mask_id=self.mask_id,
            first_token=self.mask_id + 1,
            vocab_size=self.tokenizer.vocab_size,
            rate=self.config.mask_rate,
            mean_span=self.config.mean_span,
            max_span=self.config.max_span,
        )
        return {
            "ids": torch.from_numpy(inputs).to(self.device),
            "mask": torch.from_numpy(real).to(self.device),
            "labels": torch.from_numpy(labels).to(self.device),
        }

    def validation(self, windows: Windows, batch_size: int):
        """The validation loss: mean loss per hidden token over (up to ``VAL_WINDOWS``) held-out windows,
        masked once, the same at every evaluation."""
        rows = np.arange(min(len(windows), VAL_WINDOWS))
        batches = [self.batch(windows, rows[i : i + batch_size], [1, i]) for i in range(0, len(rows), batch_size)]

        def val_loss(objective: torch.nn.Module) -> float:
            total, count = 0.0, 0
            for batch in batches:
                hidden = int((batch["labels"] != IGNORE).sum())
                total += float(objective(batch)) * hidden
                count += hidden
            return total / max(count, 1)

        return val_loss
