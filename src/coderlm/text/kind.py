"""What kind of text a dataset holds, for the defaults that depend on it (``coderlm.training.start_rate``).

- ``ONNX``: every text is ONNX text (``coderlm.collect.nets.onnx_text``: its first line is the header
  ``onnx opset=N dtype=T``), compact or minimal style.
- ``CELL``: every text is a NAS-Bench-201 cell string (``|op~0|+|op~0|op~1|+|op~0|op~1|op~2|``).
- ``OTHER``: anything else, a mix of kinds included (source code, statements, kernels).
"""

from __future__ import annotations

from collections.abc import Sequence

from coderlm.collect.nets.nb201 import parse_cell
from coderlm.text.onnx_order import HEADER

ONNX = "onnx"
CELL = "nb201_cell"
OTHER = "other"


def text_kind(texts: Sequence[str]) -> str:
    """``ONNX``, ``CELL`` or ``OTHER`` (no texts: ``OTHER``)."""
    if not texts:
        return OTHER
    if all(HEADER.match(text) for text in texts):
        return ONNX
    if all(_is_cell(text) for text in texts):
        return CELL
    return OTHER


def _is_cell(text: str) -> bool:
    try:
        parse_cell(text)
    except ValueError:
        return False
    return True
