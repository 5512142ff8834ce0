"""ONNX text in another valid node order (training option augment on ONNX texts)."""

from __future__ import annotations

import random
import re
from collections import Counter

import numpy as np
import pytest

from coderlm.text.augment import variants
from coderlm.text.onnx_order import reordered
from coderlm.training.examples import Rows, augmented

CELL = "|nor_conv_3x3~0|+|none~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_1x1~1|nor_conv_3x3~2|"

# a residual block: two branches from t0 meet at an Add (hand-written in the compact style)
BLOCK = """onnx opset=18 dtype=f32
input x0 [1,3,8,8]
output y0 [1,4,8,8]
t0 = Relu(x0)  # [1,3,8,8]
t1 = Conv[pads=[1,1,1,1]](t0, w0[4,3,3,3])  # [1,4,8,8]
t2 = BatchNormalization(t1, w1[4], w2[4], w3[4], w4[4])  # [1,4,8,8]
t3 = Conv(t0, w5[4,3,1,1])  # [1,4,8,8]
t4 = Mul(t3, f32[]{0.5})  # [1,4,8,8]
y0 = Add(t2, t4)  # [1,4,8,8]
"""


def structure(text: str) -> Counter:
    """Each node line with its tensor and weight numbers blanked: what a reorder must keep."""
    return Counter(re.sub(r"\b([tw])\d+", r"\1", line) for line in text.splitlines()[3:])


def edges(text: str) -> set[tuple[str, str, int]]:
    """(producer line, consumer line, input position) with numbers blanked: the graph's wiring."""
    lines = text.splitlines()[3:]
    producer = {line.split(" = ")[0]: re.sub(r"\b([tw])\d+", r"\1", line) for line in lines}
    out = set()
    for line in lines:
        args = line.split(" = ", 1)[1].rsplit("  # ", 1)[0]
        args = args[args.rindex("(") + 1 : -1]
        for position, arg in enumerate(a.strip() for a in args.split(",")):
            if arg in producer:
                out.add((producer[arg], re.sub(r"\b([tw])\d+", r"\1", line), position))
    return out


def test_canonical_order_gives_the_text_back():
    assert reordered(BLOCK, None) == BLOCK


def test_another_order_keeps_every_line_and_connection():
    seen = {reordered(BLOCK, random.Random(seed)) for seed in range(20)}
    assert len(seen) == 2  # the Add's two branches, in either order
    other = next(text for text in seen if text != BLOCK)
    assert other.splitlines()[3] == "t0 = Relu(x0)  # [1,3,8,8]"
    assert other.splitlines()[4] == "t1 = Conv(t0, w0[4,3,1,1])  # [1,4,8,8]"  # renumbered in the new order
    assert other.splitlines()[-1] == "y0 = Add(t4, t2)  # [1,4,8,8]"  # positions kept, names renumbered
    assert structure(other) == structure(BLOCK) and edges(other) == edges(BLOCK)
    assert reordered(other, None) == BLOCK  # ordered canonically, it is the original again


def test_a_weight_used_twice_carries_its_shape_at_its_new_first_use():
    text = BLOCK.replace("t3 = Conv(t0, w5[4,3,1,1])", "t3 = Conv[pads=[1,1,1,1]](t0, w0)")
    others = {reordered(text, random.Random(seed)) for seed in range(20)} - {text}
    (other,) = others
    assert "t1 = Conv[pads=[1,1,1,1]](t0, w0[4,3,3,3])" in other
    assert other.count("[4,3,3,3]") == 1 and reordered(other, None) == text


@pytest.mark.parametrize(
    "text",
    [
        "def f(x):\n    return x\n",
        "|nor_conv_3x3~0|+|none~0|avg_pool_3x3~1|",
        "onnx opset=18 dtype=f32\ninput x0 [1]\noutput y0 [1]\nthis is not a node\n",
        "onnx opset=18 dtype=f32\ninput x0 [1]\noutput y0 [1]\nt0 = Relu(t1)\nt1 = Relu(t0)\ny0 = Add(t0, t1)\n",
        "onnx opset=18 dtype=f32\ninput x0 [1]\noutput y0 [1]\ny0 = Relu(t7)\n",
        "onnx opset=18 dtype=f32\ninput x0 [1]\noutput y0 [1]\nt0 = Relu(x0)\nt0 = Relu(x0)\ny0 = Add(t0, t0)\n",
    ],
    ids=["python", "cell-string", "not-a-node", "cycle", "never-written", "written-twice"],
)
def test_text_it_cannot_reorder_gets_none(text):
    assert reordered(text, random.Random(0)) is None


def test_variants_of_an_onnx_text_are_reorders():
    copies = variants(BLOCK, 3, seed=0)
    assert len(copies) == 1  # only one other order exists
    assert reordered(copies[0], None) == BLOCK


def test_augmented_adds_reordered_copies_of_onnx_rows():
    rows = Rows([BLOCK, "|a~0|"], np.array([[1.0], [2.0]]), None)
    out = augmented(rows, 2, seed=0)
    assert len(out.texts) == 3 and out.values[2, 0] == 1.0 and reordered(out.texts[2], None) == BLOCK


def test_real_exported_networks_round_trip():
    pytest.importorskip("onnxscript")
    import torch

    from coderlm.collect.nets.nb201 import build_network
    from coderlm.collect.nets.onnx_export import export_onnx
    from coderlm.collect.nets.onnx_text import onnx_to_text

    torch.manual_seed(0)
    model = export_onnx(build_network(CELL, cells_per_stage=1))
    for style in ("compact", "minimal"):
        text = onnx_to_text(model, style=style)
        assert reordered(text, None) == text
        copies = variants(text, 4, seed=1)
        assert len(copies) == 4
        for copy in copies:
            assert structure(copy) == structure(text) and reordered(copy, None) == text


def test_fit_trains_on_reordered_copies_and_reports_them():
    from coderlm import RegressionLM

    texts = [BLOCK.replace("{0.5}", f"{{{i}}}") for i in range(8)]
    tiny = {"encoder_dim": 32, "decoder_dim": 32, "encoder_heads": 4, "decoder_heads": 4}
    rlm = RegressionLM(vocab_size=300, model=tiny, training={"steps": 2, "augment": 4, "progress": False})
    rlm.fit(texts, np.arange(8.0))
    assert rlm.fit_report_["augment"] == 4 and rlm.fit_report_["examples"] == 16  # one other order each
    off = RegressionLM(vocab_size=300, model=tiny, training={"steps": 2, "progress": False})
    off.fit(texts, np.arange(8.0))
    assert off.fit_report_["augment"] == 0 and off.fit_report_["examples"] == 8
    assert off.fit_report_["text_kind"] == "onnx" and off.fit_report_["learning_rate"] == 3e-4  # network text
