"""Numbers in the input read as magnitudes, not only as digit strings.

A tokenizer that splits digits (``pretokenize`` ``code`` or ``lines+digits``) writes ``20480`` as five
tokens; the encoder must learn from data that five digits starting with 2 mean "about 2e4". With
``number_values`` every token of a run of digits also gets an embedding of the run's value, as
``log10(1 + value)`` (in the spirit of xVal, Golkar et al. 2023, which scales one number embedding by
the value): a smooth, ordered input that a size, a loop bound or a count can be read from directly.

The values are computed from the token ids inside the model (the ids of ``0``..``9`` are part of the
model's config), so tokenizing, batching, caching and serving are unchanged. The first four digits of
a run set its mantissa and its length the exponent, which is exact to 4 significant digits; a decimal
point or a sign splits or is ignored (``3.75`` reads as the runs ``3`` and ``75``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

SCALES = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)  # periods, in decades, of the sine/cosine features
MANTISSA_DIGITS = 4  # leading digits of a run that set its value


def digit_table(vocab_size: int, digit_ids: Sequence[int]) -> torch.Tensor:
    """(vocab_size,) long: the digit a token id stands for (``digit_ids[d]`` -> d), -1 for other tokens."""
    table = torch.full((vocab_size,), -1, dtype=torch.long)
    for digit, token in enumerate(digit_ids):
        table[token] = digit
    return table


def run_log_values(ids: torch.Tensor, table: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """For ids (B, T): which tokens are digits (B, T) bool, and the log10(1 + value) of the run of
    digits each belongs to (B, T) float (0 elsewhere)."""
    digit = table[ids]
    is_digit = digit >= 0
    B, T = ids.shape
    positions = torch.arange(T, device=ids.device).expand(B, T)
    starts = is_digit & ~F.pad(is_digit[:, :-1], (1, 0), value=False)
    run = torch.cumsum(starts, 1) * is_digit  # 1, 2, ... per run of digits; 0 off digits
    offset = positions - torch.cummax(torch.where(starts, positions, 0), 1).values  # place within the run
    ones = is_digit.float()
    length = torch.zeros(B, T + 1, device=ids.device).scatter_add_(1, run, ones).gather(1, run)
    lead = (offset < MANTISSA_DIGITS) & is_digit
    place = torch.where(lead, digit.clamp(min=0).float() * 10.0 ** (-offset.clamp(max=MANTISSA_DIGITS).float()), 0.0)
    mantissa = torch.zeros(B, T + 1, device=ids.device).scatter_add_(1, run, place).gather(1, run)
    log_value = torch.log10(1.0 + mantissa * 10.0 ** (length - 1).clamp(0, 30)) * ones
    return is_digit, log_value


def value_features(log_value: torch.Tensor) -> torch.Tensor:
    """(..., 1 + 2 * len(SCALES)) features of log10 values: the value over 10, and sines/cosines."""
    angles = log_value[..., None] * (2 * torch.pi / torch.tensor(SCALES, device=log_value.device))
    return torch.cat([log_value[..., None] / 10.0, angles.sin(), angles.cos()], -1)


class NumberValues(nn.Module):
    """Adds to each digit token an embedding of its number's value (see the module docstring)."""

    def __init__(self, vocab_size: int, digit_ids: Sequence[int], dim: int, zero_init: bool = False) -> None:
        """``zero_init``: the projection starts at zero, so a pretrained encoder it feeds starts as it was."""
        super().__init__()
        self.register_buffer("table", digit_table(vocab_size, digit_ids), persistent=False)
        self.proj = nn.Linear(1 + 2 * len(SCALES), dim)
        if zero_init:
            nn.init.zeros_(self.proj.weight)
            nn.init.zeros_(self.proj.bias)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (B, T) -> (B, T, dim), zero on tokens that are not digits."""
        is_digit, log_value = run_log_values(ids, self.table)
        return self.proj(value_features(log_value)) * is_digit[..., None]
