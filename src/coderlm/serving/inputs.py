"""A request's inputs -> the texts a model reads, each error naming the input.

A text is taken as it is. An ``.onnx`` file (``onnx_base64``) becomes its graph's text exactly as
``coderlm collect nas`` and ``coderlm predict`` write it (``collect.nets.onnx_export.load_onnx``, its
checks included, then ``onnx_text.onnx_to_text`` in the server's ``--onnx-style``); this needs the
``onnx`` extra and runs in a thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from coderlm.serving.schemas import Input


class InputError(ValueError):
    """A bad input; ``field`` names it as the request does (``inputs[2].onnx_base64``)."""

    def __init__(self, index: int, field: str, message: str) -> None:
        self.index, self.field = index, field
        super().__init__(f"inputs[{index}].{field}: {message}")


class OnnxUnavailableError(RuntimeError):
    """``onnx_base64`` inputs need the onnx extra, which this server lacks."""


async def input_texts(inputs: list[Input], onnx_style: str) -> list[str]:
    """The text of each input, in order; ``.onnx`` graphs converted in a worker thread."""
    texts: list[str] = []
    for index, item in enumerate(inputs):
        if item.text is not None:
            texts.append(item.text)
        else:
            texts.append(await asyncio.to_thread(onnx_bytes_text, item.onnx_base64, onnx_style, index))
    return texts


def onnx_bytes_text(data: bytes, style: str, index: int = 0) -> str:
    """An ``.onnx`` file's bytes -> its graph's text, as the collector writes it."""
    try:
        # the onnx extra, loaded only when an .onnx input is given
        from coderlm.collect.nets.onnx_export import load_onnx
        from coderlm.collect.nets.onnx_text import onnx_to_text
    except ImportError as exc:
        raise OnnxUnavailableError(
            f"onnx_base64 inputs need the onnx extra (pip install 'coderlm[onnx]'): {exc}"
        ) from exc
    with tempfile.TemporaryDirectory(prefix="coderlm-serve-") as folder:
        path = Path(folder) / "input.onnx"
        path.write_bytes(data)
        try:
            text = onnx_to_text(load_onnx(path), style=style)
        except ValueError as exc:
            raise InputError(index, "onnx_base64", str(exc).replace(f"{path}: ", "")) from exc
    if not text:
        raise InputError(index, "onnx_base64", "the graph's text is empty")
    return text


def text_bytes(texts: list[str]) -> int:
    """UTF-8 bytes of all the texts."""
    return sum(len(text.encode()) for text in texts)
