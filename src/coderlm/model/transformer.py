"""The encoder-decoder, top to bottom.

Encoder: pre-LayerNorm transformer over input tokens with rotary or learned
positions and a padding mask. Decoder: pre-LayerNorm blocks of causal
self-attention (with a KV cache), cross-attention to the encoder states, and an
MLP; its head scores only the number vocabulary.

The decoder works on token tensors shaped (B, S, t): B inputs, S samples per
input, t positions. Cross-attention folds the S samples into the query axis
(B, nh, S*t, hs), so the encoder states of one input are attended by all of its
samples without being copied S times. Training uses S = 1.
"""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F
from torch import nn

from coderlm.model.config import ModelConfig
from coderlm.model.hf_encoder import SCRATCH, PretrainedEncoder
from coderlm.model.number_values import NumberValues


# ----------------------------------------------------------------- building blocks
class MLP(nn.Module):
    def __init__(self, dim: int, ratio: float, dropout: float) -> None:
        super().__init__()
        hidden = int(dim * ratio)
        self.fc = nn.Linear(dim, hidden)
        self.proj = nn.Linear(hidden, dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.proj(F.gelu(self.fc(x))))


def rotary_tables(length: int, head_size: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of shape (length, head_size // 2) for rotary position embeddings."""
    inv_freq = 1.0 / (10000 ** (torch.arange(0, head_size, 2, device=device, dtype=torch.float32) / head_size))
    angles = torch.outer(torch.arange(length, device=device, dtype=torch.float32), inv_freq)
    return angles.cos(), angles.sin()


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate pairs (first half, second half) of x (B, nh, T, hs) by position."""
    x1, x2 = x.chunk(2, dim=-1)
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class EncoderSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(dropout)  # on the attention output, not the (B, nh, T, T) probabilities

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor, rotary: tuple | None) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)  # (B, nh, T, hs)
        if rotary is not None:
            q, k = apply_rotary(q, *rotary), apply_rotary(k, *rotary)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=key_mask)
        return self.dropout(self.proj(y.transpose(1, 2).reshape(B, T, C)))


class EncoderBlock(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.encoder_dim)
        self.attn = EncoderSelfAttention(cfg.encoder_dim, cfg.encoder_heads, cfg.dropout)
        self.ln2 = nn.LayerNorm(cfg.encoder_dim)
        self.mlp = MLP(cfg.encoder_dim, cfg.mlp_ratio, cfg.dropout)

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor, rotary: tuple | None) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), key_mask, rotary)
        return x + self.mlp(self.ln2(x))


class Encoder(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.input_vocab_size, cfg.encoder_dim)
        self.pos_emb = nn.Embedding(cfg.max_input_len, cfg.encoder_dim) if cfg.positions == "learned" else None
        self.number_values = (
            NumberValues(cfg.input_vocab_size, cfg.digit_ids, cfg.encoder_dim) if cfg.number_values else None
        )
        self.blocks = nn.ModuleList(EncoderBlock(cfg) for _ in range(cfg.encoder_layers))
        self.ln_f = nn.LayerNorm(cfg.encoder_dim)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """ids (B, T) int, mask (B, T) bool (True = real token) -> states (B, T, De)."""
        T = ids.shape[1]
        if self.cfg.max_input_len < T:
            raise ValueError(f"input of {T} tokens exceeds max_input_len={self.cfg.max_input_len}")
        x = self.tok_emb(ids)
        if self.number_values is not None:
            x = x + self.number_values(ids)
        rotary = None
        if self.pos_emb is not None:
            x = x + self.pos_emb(torch.arange(T, device=ids.device))
        else:
            rotary = rotary_tables(T, self.cfg.encoder_dim // self.cfg.encoder_heads, ids.device)
        key_mask = mask[:, None, None, :]  # (B, 1, 1, T)
        for block in self.blocks:
            x = block(x, key_mask, rotary)
        return self.ln_f(x)


# ------------------------------------------------------------------------- decoder
@dataclasses.dataclass
class KVCache:
    """Self-attention keys and values of the positions decoded so far, per decoder layer."""

    keys: list[torch.Tensor]  # each (B*S, nh, max_len, hs)
    values: list[torch.Tensor]
    length: int = 0  # positions filled


@dataclasses.dataclass
class Memory:
    """Encoder output prepared for decoding: cross-attention keys/values per layer."""

    cross: list[tuple[torch.Tensor, torch.Tensor]]  # each (B, nh, T, hs)
    mask: torch.Tensor  # (B, 1, 1, T) bool


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(dropout)  # on the attention output, not the (B, nh, T, T) probabilities

    def forward(self, x: torch.Tensor, cache: KVCache | None, layer: int, segment: int = 0) -> torch.Tensor:
        """``segment`` > 0: a query sees only keys of its own block of ``segment`` positions (one objective)."""
        N, t, C = x.shape  # N = B*S
        q, k, v = self.qkv(x).view(N, t, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)  # (N, nh, t, hs)
        start = 0
        if cache is not None:
            start = cache.length
            cache.keys[layer][:, :, start : start + t] = k
            cache.values[layer][:, :, start : start + t] = v
            k, v = cache.keys[layer][:, :, : start + t], cache.values[layer][:, :, : start + t]
        if start == 0 and not segment:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=t > 1)
        else:  # query i sits at position start + i and sees keys up to it (within its segment)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(start, t, segment, x.device))
        return self.dropout(self.proj(y.transpose(1, 2).reshape(N, t, C)))


def causal_mask(start: int, t: int, segment: int, device: torch.device) -> torch.Tensor:
    """(t, start + t) bool: query i (at position start + i) may attend to key j; with ``segment`` > 0
    only to keys of its own block of ``segment`` positions."""
    queries = torch.arange(start, start + t, device=device)[:, None]
    keys = torch.arange(start + t, device=device)[None, :]
    mask = keys <= queries
    if segment:
        mask &= keys // segment == queries // segment
    return mask


class CrossAttention(nn.Module):
    def __init__(self, dim: int, memory_dim: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(memory_dim, 2 * dim)  # also maps encoder width to decoder width
        self.proj = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(dropout)  # on the attention output, not the (B, nh, T, T) probabilities

    def memory_kv(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        B, T, _ = states.shape
        k, v = self.kv(states).view(B, T, 2, self.heads, -1).permute(2, 0, 3, 1, 4)  # (B, nh, T, hs)
        return k, v

    def forward(self, x: torch.Tensor, kv: tuple[torch.Tensor, torch.Tensor], mask: torch.Tensor) -> torch.Tensor:
        B, S, t, C = x.shape
        q = self.q(x).view(B, S * t, self.heads, C // self.heads).transpose(1, 2)  # (B, nh, S*t, hs)
        y = F.scaled_dot_product_attention(q, *kv, attn_mask=mask)
        return self.dropout(self.proj(y.transpose(1, 2).reshape(B, S, t, C)))


class DecoderBlock(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        dim = cfg.decoder_dim
        self.ln1 = nn.LayerNorm(dim)
        self.self_attn = CausalSelfAttention(dim, cfg.decoder_heads, cfg.dropout)
        self.ln2 = nn.LayerNorm(dim)
        self.cross_attn = CrossAttention(dim, cfg.encoder_dim, cfg.decoder_heads, cfg.dropout)
        self.ln3 = nn.LayerNorm(dim)
        self.mlp = MLP(dim, cfg.mlp_ratio, cfg.dropout)
        span = cfg.objective_span
        self.segment = span if span < cfg.output_length else 0  # self-attention within each objective

    def forward(
        self, x: torch.Tensor, memory_kv: tuple, memory_mask: torch.Tensor, cache: KVCache | None, layer: int
    ) -> torch.Tensor:
        B, S, t, C = x.shape
        x = x + self.self_attn(self.ln1(x).view(B * S, t, C), cache, layer, self.segment).view(B, S, t, C)
        x = x + self.cross_attn(self.ln2(x), memory_kv, memory_mask)
        return x + self.mlp(self.ln3(x))


class Decoder(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.bos_id = cfg.output_vocab_size  # the start token is input-only: never predicted
        self.restart_every = cfg.objective_span  # chained: one start token; independent: one per objective
        self.tok_emb = nn.Embedding(cfg.output_vocab_size + 1, cfg.decoder_dim)
        self.pos_emb = nn.Embedding(cfg.output_length, cfg.decoder_dim)
        self.blocks = nn.ModuleList(DecoderBlock(cfg) for _ in range(cfg.decoder_layers))
        self.ln_f = nn.LayerNorm(cfg.decoder_dim)
        self.head = nn.Linear(cfg.decoder_dim, cfg.output_vocab_size, bias=False)

    def new_cache(self, rows: int, device: torch.device, dtype: torch.dtype) -> KVCache:
        heads = self.cfg.decoder_heads
        shape = (rows, heads, self.cfg.output_length, self.cfg.decoder_dim // heads)
        n = len(self.blocks)
        return KVCache(
            [torch.empty(shape, device=device, dtype=dtype) for _ in range(n)],
            [torch.empty(shape, device=device, dtype=dtype) for _ in range(n)],
        )

    def forward(self, tokens: torch.Tensor, memory: Memory, cache: KVCache | None = None) -> torch.Tensor:
        """tokens (B, S, t) -> logits (B, S, t, V) over the number vocabulary.

        With a cache, tokens continue the positions already in it, and the cache grows by t.
        """
        t = tokens.shape[-1]
        start = cache.length if cache is not None else 0
        if start + t > self.cfg.output_length:
            raise ValueError(f"decoding past output_length={self.cfg.output_length}")
        x = self.tok_emb(tokens) + self.pos_emb(torch.arange(start, start + t, device=tokens.device))
        for layer, block in enumerate(self.blocks):
            x = block(x, memory.cross[layer], memory.mask, cache, layer)
        if cache is not None:
            cache.length += t
        return self.head(self.ln_f(x))


# -------------------------------------------------------------------- whole model
class EncoderDecoder(nn.Module):
    """Reads input tokens, writes number tokens."""

    def __init__(self, cfg: ModelConfig, encoder_config: dict | None = None) -> None:
        """``encoder_config``: a pretrained encoder's Hugging Face config, to rebuild it without its folder."""
        super().__init__()
        self.cfg = cfg
        if cfg.encoder == SCRATCH:
            self.encoder: Encoder | PretrainedEncoder = Encoder(cfg)
        else:
            self.encoder = PretrainedEncoder(cfg, encoder_config)
        self.decoder = Decoder(cfg)
        for part in (self.encoder if cfg.encoder == SCRATCH else self.encoder.proj, self.decoder):
            part.apply(init_weights)  # a pretrained body keeps its weights

    @property
    def encoder_config(self) -> dict | None:
        """A pretrained encoder's Hugging Face config (saved with the model), else None."""
        return self.encoder.hf_config if isinstance(self.encoder, PretrainedEncoder) else None

    def encode(self, ids: torch.Tensor | None, mask: torch.Tensor, states: torch.Tensor | None = None) -> Memory:
        """Memory for input ids (B, T), or for a frozen pretrained body's cached ``states`` (B, T, H)."""
        return self.memory(self.encoder_states(ids, mask, states), mask)

    def encoder_states(
        self, ids: torch.Tensor | None, mask: torch.Tensor, states: torch.Tensor | None = None
    ) -> torch.Tensor:
        """The encoder's output (B, T, De) for input ids, or for a frozen body's cached ``states``."""
        return self.encoder(ids, mask) if states is None else self.encoder.project(states)

    def memory(self, states: torch.Tensor, mask: torch.Tensor) -> Memory:
        """What the decoder attends to: the encoder's output (B, T, De) as cross-attention keys and values."""
        if self.cfg.pooled_memory:  # the mean of the states first: what a regression head reads
            pooled = masked_mean(states, mask)[:, None]
            states, mask = torch.cat([pooled, states], 1), torch.cat([torch.ones_like(mask[:, :1]), mask], 1)
        cross = [block.cross_attn.memory_kv(states) for block in self.decoder.blocks]
        return Memory(cross, mask[:, None, None, :])

    def teacher_forced_inputs(self, targets: torch.Tensor) -> torch.Tensor:
        """Decoder inputs for targets (B, L): the start token, then targets shifted right (with independent
        objectives, each objective's first input is the start token again)."""
        bos = torch.full_like(targets[:, :1], self.decoder.bos_id)
        inputs = torch.cat([bos, targets[:, :-1]], dim=1)
        inputs[:, :: self.decoder.restart_every] = self.decoder.bos_id
        return inputs

    def forward(
        self, ids: torch.Tensor | None, mask: torch.Tensor, targets: torch.Tensor, states: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Teacher-forced logits (B, L, V) for target ids (B, L)."""
        return self.decode_teacher_forced(self.encode(ids, mask, states), targets)

    def decode_teacher_forced(self, memory: Memory, targets: torch.Tensor) -> torch.Tensor:
        """Logits (B, L, V) of target ids (B, L), each token given the ones before it."""
        return self.decoder(self.teacher_forced_inputs(targets)[:, None], memory)[:, 0]

    def loss(
        self,
        ids: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        targets: torch.Tensor | None = None,
        weights: torch.Tensor | None = None,
        states: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Mean cross-entropy over target tokens; ``weights`` (B, L) masks out missing objectives.

        ``states`` replaces ``ids`` with cached states of a frozen pretrained body (see ``encoder_cache``).
        """
        logits = self(ids, mask, targets, states)
        nll = F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten(), reduction="none")
        return weighted_mean(nll.view_as(targets), weights)


def masked_mean(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over the unmasked positions: states (B, T, D), mask (B, T) -> (B, D)."""
    weights = mask[..., None].to(states.dtype)
    return (states * weights).sum(1) / weights.sum(1).clamp(min=1.0)


def weighted_mean(per_token: torch.Tensor, weights: torch.Tensor | None) -> torch.Tensor:
    """Mean of per-token losses (B, L); with ``weights`` (B, L), their weighted mean (0 = not learned)."""
    if weights is None:
        return per_token.mean()
    weights = weights.to(per_token.dtype)
    return (per_token * weights).sum() / weights.sum().clamp(min=1.0)


def init_weights(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.normal_(module.weight, std=0.02)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        nn.init.normal_(module.weight, std=0.02)


def count_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())
