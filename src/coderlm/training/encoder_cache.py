"""Encoder-output cache: a frozen pretrained encoder's states, computed once per distinct input.

With a frozen encoder the states of an input never change, so training needs
them once, not once per epoch: ``EncoderCache.states`` runs the encoder body over
the inputs it has not seen and keeps the states (fp16 by default, only the real
tokens), and ``batches.CachedTensors`` serves training batches from them. Each step then
runs only the projection and the decoder.

An entry's key is a hash of the encoder's identity (its Hugging Face config and
a hash of its weights), the maximum input length and the input's token ids
(which are the text as the tokenizer reads it, structure markers included). A
different encoder, weights, tokenizer or length therefore never reuses states.

``folder=None`` keeps the cache in memory (it lives as long as the fit). With a
folder, entries go to append-only shard files, memory-mapped when read, plus an
``index.json`` replaced atomically; a file lock serialises writers, so ranks of a
DDP run (and concurrent runs) share one folder: the first computes, the others
read. A resumed run finds its states on disk.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import uuid
from pathlib import Path

import numpy as np
import torch

from coderlm.atomic import atomic_file, write_atomic
from coderlm.model.hf_encoder import PretrainedEncoder
from coderlm.text.bpe import TokenBatch, length_sorted_batches

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
INDEX_FILE = "index.json"


class EncoderCache:
    def __init__(
        self,
        encoder: PretrainedEncoder,
        dtype: str = "fp16",
        folder: str | Path | None = None,
        batch_size: int = 32,
        device: str | torch.device = "cpu",
    ) -> None:
        if dtype not in DTYPES:
            raise ValueError(f"cache dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
        if not encoder.frozen:
            raise ValueError("only a frozen encoder's states can be cached (train_encoder is on)")
        self.encoder, self.dtype, self.batch_size = encoder, dtype, batch_size
        self.device = torch.device(device)
        self.identity = encoder.identity()
        self.folder = Path(folder) / f"{self.identity[:20]}-{dtype}" if folder is not None else None
        self._memory: dict[str, torch.Tensor] = {}
        self._shards: dict[str, torch.Tensor] = {}
        self.computed = 0  # inputs whose states were computed (not found) in the last call

    def keys(self, tokens: TokenBatch, max_length: int) -> list[str]:
        prefix = f"{self.identity}|{max_length}|".encode()
        return [
            hashlib.sha256(prefix + tokens.ids[row, : int(tokens.mask[row].sum())].tobytes()).hexdigest()
            for row in range(len(tokens.ids))
        ]

    def states(self, tokens: TokenBatch, max_length: int) -> list[torch.Tensor]:
        """Per input, its states (length_i, H) in the cache dtype; missing ones are computed first."""
        keys = self.keys(tokens, max_length)
        with self._locked():
            stored = self._load_index()
            missing = {k: row for row, k in enumerate(keys) if k not in stored}
            self.computed = len(missing)
            if missing:
                fresh = self._compute(tokens, list(missing.values()))
                stored |= self._store(dict(zip(missing, fresh, strict=True)))
        return [self._read(k, stored[k]) for k in keys]

    # ------------------------------------------------------------- compute
    @torch.no_grad()
    def _compute(self, tokens: TokenBatch, rows: list[int]) -> list[torch.Tensor]:
        lengths = tokens.mask[rows].sum(1)
        out: list[torch.Tensor] = [torch.empty(0)] * len(rows)
        was_training = self.encoder.training
        self.encoder.eval()
        for part in length_sorted_batches(lengths, self.batch_size):
            width = max(int(lengths[part].max()), 1)
            index = np.asarray(rows)[part]
            ids = torch.from_numpy(tokens.ids[index, :width]).to(self.device)
            mask = torch.from_numpy(tokens.mask[index, :width]).to(self.device)
            states = self.encoder.states(ids, mask).to(DTYPES[self.dtype]).cpu()
            for i, j in enumerate(part):
                out[j] = states[i, : int(lengths[j])].clone()
        self.encoder.train(was_training)
        return out

    # --------------------------------------------------------------- store
    @contextlib.contextmanager
    def _locked(self):
        if self.folder is None:
            yield
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _load_index(self) -> dict:
        if self.folder is None:
            return dict.fromkeys(self._memory)
        index = self.folder / INDEX_FILE
        return json.loads(index.read_text())["entries"] if index.is_file() else {}

    def _store(self, fresh: dict[str, torch.Tensor]) -> dict:
        if self.folder is None:
            self._memory |= fresh
            return dict.fromkeys(fresh)
        shard = f"shard-{uuid.uuid4().hex[:12]}.bin"
        entries, offset = {}, 0
        with atomic_file(self.folder / shard) as file:
            for key, tensor in fresh.items():
                data = tensor.contiguous().view(torch.uint8).numpy().tobytes()
                file.write(data)
                entries[key] = [shard, offset, tensor.shape[0], tensor.shape[1]]
                offset += len(data)
        index = self._load_index() | entries
        write_atomic(
            self.folder / INDEX_FILE, json.dumps({"identity": self.identity, "dtype": self.dtype, "entries": index})
        )
        return entries

    def _read(self, key: str, entry: list | None) -> torch.Tensor:
        """An entry's states; from disk, a view of the memory-mapped shard (read when used)."""
        if entry is None:
            return self._memory[key]
        shard, offset, length, hidden = entry
        if shard not in self._shards:  # copy-on-write mapping: writable for torch, never written back
            self._shards[shard] = torch.from_numpy(np.memmap(self.folder / shard, dtype=np.uint8, mode="c"))
        size = length * hidden * DTYPES[self.dtype].itemsize
        return self._shards[shard][offset : offset + size].view(DTYPES[self.dtype]).view(length, hidden)
