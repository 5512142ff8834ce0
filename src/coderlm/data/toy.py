"""A built-in toy task for examples and tests: short programs; the target is their number of lines."""

from __future__ import annotations

import random


def line_count_task(n: int, seed: int = 0, max_lines: int = 12) -> tuple[list[str], list[float]]:
    """``n`` texts of 1..``max_lines`` assignment lines (``x3 = 41``), and each one's line count."""
    rng = random.Random(seed)
    texts, targets = [], []
    for _ in range(n):
        lines = rng.randint(1, max_lines)
        texts.append("".join(f"x{rng.randint(0, 9)} = {rng.randint(0, 99)}\n" for _ in range(lines)))
        targets.append(float(lines))
    return texts, targets
