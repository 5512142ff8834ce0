"""What kind of text a dataset holds: ONNX text, NAS-Bench-201 cell strings, or anything else."""

from __future__ import annotations

import numpy as np
import pytest

from coderlm.text.kind import CELL, ONNX, OTHER, text_kind

CELLS = [
    "|nor_conv_3x3~0|+|none~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_1x1~1|nor_conv_3x3~2|",
    "|none~0|+|skip_connect~0|none~1|+|nor_conv_1x1~0|nor_conv_3x3~1|avg_pool_3x3~2|",
]
ONNX_TEXT = "onnx opset=18 dtype=f32\ninput x0 [1,3,8,8]\noutput y0 [1,3,8,8]\ny0 = Relu(x0)  # [1,3,8,8]\n"
PYTHON = "def f(x):\n    return x + 1\n"


def test_every_text_of_one_kind_names_the_kind():
    assert text_kind([ONNX_TEXT, ONNX_TEXT.replace("Relu", "Sigmoid")]) == ONNX
    assert text_kind(CELLS) == CELL
    assert text_kind([PYTHON]) == OTHER


@pytest.mark.parametrize(
    "texts",
    [
        [],  # nothing to tell
        [ONNX_TEXT, PYTHON],  # a mix of kinds
        [*CELLS, ONNX_TEXT],
        ["|nor_conv_3x3~0|+|none~0|avg_pool_3x3~1|"],  # a cell with a node missing
        ["|conv_5x5~0|+|none~0|none~1|+|none~0|none~1|none~2|"],  # an operation NAS-Bench-201 does not have
        ["  onnx opset=18 dtype=f32\n"],  # the header not at the start
    ],
)
def test_mixed_empty_or_malformed_texts_are_other(texts):
    assert text_kind(texts) == OTHER


def test_a_fit_from_scratch_on_cell_strings_starts_at_the_network_rate():
    from coderlm import RegressionLM

    tiny = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}
    texts = CELLS * 4
    rlm = RegressionLM(vocab_size=300, model=tiny, training={"steps": 2, "progress": False})
    rlm.fit(texts, np.arange(8.0))
    assert rlm.fit_report_["text_kind"] == CELL and rlm.fit_report_["learning_rate"] == 3e-4
    given = RegressionLM(vocab_size=300, model=tiny, training={"steps": 2, "progress": False, "learning_rate": 2e-3})
    given.fit(texts, np.arange(8.0))
    assert given.fit_report_["learning_rate"] == 2e-3  # a rate given wins
    code = RegressionLM(vocab_size=300, model=tiny, training={"steps": 2, "progress": False})
    code.fit([f"x = {n}\n" for n in range(8)], np.arange(8.0))
    assert code.fit_report_["text_kind"] == OTHER and code.fit_report_["learning_rate"] == 1e-3
