"""nn.Module -> ONNX export and reading .onnx files."""

from __future__ import annotations

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
ort = pytest.importorskip("onnxruntime")

from coderlm.collect.nets.nb201 import build_network  # noqa: E402
from coderlm.collect.nets.onnx_export import export_onnx, load_onnx, save_onnx  # noqa: E402

CELL = "|nor_conv_3x3~0|+|none~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_1x1~1|nor_conv_3x3~2|"


@pytest.fixture(scope="module")
def network() -> torch.nn.Module:
    torch.manual_seed(0)
    return build_network(CELL, cells_per_stage=1)


@pytest.fixture(scope="module")
def proto(network) -> onnx.ModelProto:
    return export_onnx(network)


def test_export_is_deterministic_and_keeps_weights(network, proto):
    again = export_onnx(network)
    assert proto.SerializeToString(deterministic=True) == again.SerializeToString(deterministic=True)
    weights = {i.name: onnx.numpy_helper.to_array(i) for i in proto.graph.initializer}
    assert sum(a.size for a in weights.values()) > sum(p.numel() for p in network.parameters())  # + BN statistics
    assert not network.training


def test_export_matches_pytorch_in_onnxruntime(network, proto):
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: x})[0]
    with torch.no_grad():
        want = network(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_batchnorm_stays_unless_folded():
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)).train()
    ops = [n.op_type for n in export_onnx(net, (1, 3, 8, 8)).graph.node]
    assert ops == ["Conv", "BatchNormalization"]
    assert net.training  # mode restored
    assert [n.op_type for n in export_onnx(net, (1, 3, 8, 8), fold_batchnorm=True).graph.node] == ["Conv"]


def test_bad_input_shape():
    with pytest.raises(ValueError, match="input_shape"):
        export_onnx(torch.nn.Identity(), (1, 0, 4))


def test_save_and_load_round_trip(proto, tmp_path):
    path = save_onnx(proto, tmp_path / "sub" / "net.onnx")
    assert load_onnx(path).SerializeToString(deterministic=True) == proto.SerializeToString(deterministic=True)


@pytest.mark.parametrize(
    "content",
    [b"", b"this is not an onnx model\n", bytes(range(256)) * 4, b"\x08\x07\x12"],
    ids=["empty", "text", "binary", "truncated"],
)
def test_load_rejects_non_onnx_files_naming_them(tmp_path, content):
    path = tmp_path / "bad.onnx"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"bad\.onnx"):
        load_onnx(path)


def test_load_rejects_corrupt_model_and_missing_file(proto, tmp_path):
    path = tmp_path / "cut.onnx"
    path.write_bytes(proto.SerializeToString()[:5000])
    with pytest.raises(ValueError, match=r"cut\.onnx"):
        load_onnx(path)
    with pytest.raises(ValueError, match=r"missing\.onnx"):
        load_onnx(tmp_path / "missing.onnx")
