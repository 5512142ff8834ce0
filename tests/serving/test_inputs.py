"""A request's inputs -> texts: ``.onnx`` bytes read as the collector reads files, errors naming the input."""

from __future__ import annotations

import sys

import pytest

from coderlm.serving.inputs import InputError, OnnxUnavailableError, onnx_bytes_text


def test_bytes_that_are_not_onnx_name_the_input():
    pytest.importorskip("onnx")
    with pytest.raises(InputError, match=r"^inputs\[3\]\.onnx_base64: not a valid ONNX model") as error:
        onnx_bytes_text(b"\x00not onnx", "compact", index=3)
    assert (error.value.index, error.value.field) == (3, "onnx_base64")
    assert "coderlm-serve-" not in str(error.value)  # the temporary file's name is not shown


def test_without_the_onnx_extra_onnx_inputs_are_refused(monkeypatch):
    monkeypatch.setitem(sys.modules, "coderlm.collect.nets.onnx_export", None)  # as if onnx were not installed
    with pytest.raises(OnnxUnavailableError, match=r"need the onnx extra \(pip install 'coderlm\[onnx\]'\)"):
        onnx_bytes_text(b"", "compact")
