"""Span masking (SpanBERT): which tokens the encoder must restore, and what it sees in their place.

A share ``rate`` of each window's tokens is hidden in contiguous spans whose lengths are
geometric with mean ``mean_span`` (capped at ``max_span``). Spans matter for code: a byte-level
BPE cuts an identifier into several tokens, and hiding one of them alone is solved by copying the
same identifier from elsewhere in the window; hiding the whole name (or ``range(len(``) asks for
what the code means. Each span is, as a whole, replaced by ``<mask>`` tokens (80%), by random
tokens (10%) or left as it is (10%), so the encoder cannot learn that only ``<mask>`` needs
restoring. The labels hold the original token where a span was drawn and -100 elsewhere.
"""

from __future__ import annotations

import numpy as np

IGNORE = -100  # the label of a token the loss skips (PyTorch's cross_entropy default)


def mask_spans(
    ids: np.ndarray,
    maskable: np.ndarray,
    rng: np.random.Generator,
    *,
    mask_id: int,
    first_token: int,
    vocab_size: int,
    rate: float = 0.15,
    mean_span: float = 3.0,
    max_span: int = 10,
) -> tuple[np.ndarray, np.ndarray]:
    """(inputs, labels) for token windows ``ids`` (n, T); only positions where ``maskable`` (n, T) is True
    are hidden (not padding, not the start token). Random replacements are drawn from
    ``first_token .. vocab_size - 1`` (ordinary tokens, no specials)."""
    if not 0 < rate < 1:
        raise ValueError(f"mask rate must be in (0, 1), got {rate}")
    if mean_span < 1 or max_span < 1:
        raise ValueError(f"mean_span and max_span must be >= 1, got {mean_span}, {max_span}")
    inputs, labels = ids.copy(), np.full_like(ids, IGNORE)
    p = 1.0 / mean_span
    for row in range(ids.shape[0]):
        positions = np.flatnonzero(maskable[row])
        if len(positions) == 0:
            continue
        budget = max(1, round(rate * len(positions)))
        hidden = np.zeros(ids.shape[1], dtype=bool)
        for _ in range(4 * budget):  # enough tries to fill the budget; overlaps only waste a try
            if hidden.sum() >= budget:
                break
            length = min(int(rng.geometric(p)), max_span, budget - int(hidden.sum()))
            start = positions[rng.integers(len(positions))]
            span = np.arange(start, min(start + length, ids.shape[1]))
            span = span[maskable[row, span] & ~hidden[span]]
            if len(span) == 0:
                continue
            hidden[span] = True
            labels[row, span] = ids[row, span]
            choice = rng.random()
            if choice < 0.8:
                inputs[row, span] = mask_id
            elif choice < 0.9:
                inputs[row, span] = rng.integers(first_token, vocab_size, size=len(span))
    return inputs, labels
