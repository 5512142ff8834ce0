"""NAS-Bench-201 cell strings and the network builder (PyTorch only, no ONNX)."""

from __future__ import annotations

import pytest
import torch

from coderlm.collect.nets.nb201 import EDGES, OPS, all_cells, build_network, format_cell, parse_cell

CELL = "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|"


def uniform(op: str) -> str:
    return format_cell([op] * len(EDGES))


def test_parse_and_format_round_trip():
    edges = parse_cell(CELL)
    assert edges == (
        ("nor_conv_3x3", 0),
        ("nor_conv_3x3", 0),
        ("avg_pool_3x3", 1),
        ("skip_connect", 0),
        ("nor_conv_3x3", 1),
        ("skip_connect", 2),
    )
    assert format_cell(edges) == CELL
    assert format_cell([op for op, _ in edges]) == CELL


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("|nor_conv_5x5~0|+|none~0|none~1|+|none~0|none~1|none~2|", "unknown op 'nor_conv_5x5'"),
        ("|none~1|+|none~0|none~1|+|none~0|none~1|none~2|", "input index '1'"),
        ("|none~0|+|none~0|none~2|+|none~0|none~1|none~2|", "input index '2'"),
        ("|none~0|+|none~0|none~1|", "2 nodes"),
        ("|none~0|+|none~0|+|none~0|none~1|none~2|", "node 2 has 1 edges"),
        ("|none~0|+|none~0|none~1|+|none~0|none~1|none~2|none~3|", "node 3 has 4 edges"),
        ("none~0|+|none~0|none~1|+|none~0|none~1|none~2|", "must start and end with '|'"),
        ("|none0|+|none~0|none~1|+|none~0|none~1|none~2|", "is not 'op~input'"),
        ("", "1 nodes"),
    ],
)
def test_parse_errors_name_the_string(bad, message):
    with pytest.raises(ValueError, match="bad cell string") as error:
        parse_cell(bad)
    assert repr(bad) in str(error.value)
    assert message in str(error.value)


def test_format_errors():
    with pytest.raises(ValueError, match="6 edges"):
        format_cell(["none"] * 5)
    with pytest.raises(ValueError, match="unknown ops"):
        format_cell(["conv"] * 6)
    with pytest.raises(ValueError, match="input node 1, expected 0"):
        format_cell([("none", 1)] * 6)


def test_all_cells_unique_and_ordered():
    cells = all_cells()
    assert len(cells) == 15_625 == len(set(cells))
    assert cells[0] == uniform("none") and cells[-1] == uniform("avg_pool_3x3")
    assert cells[1] == format_cell(["none"] * 5 + ["skip_connect"])  # last edge (2->3) varies fastest
    assert all(format_cell(parse_cell(c)) == c for c in cells[:: len(OPS) ** 3])


def n_params(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def test_parameter_counts_match_hand_count():
    # stem 3*16*9 + BN 32 = 464; reductions 14,464 + 57,600; head BN 128; classifier 650 -> 73,306
    skeleton = 464 + 14_464 + 57_600 + 128 + 650
    for op in ("none", "skip_connect", "avg_pool_3x3"):
        assert n_params(build_network(uniform(op))) == skeleton == 73_306
    # each nor_conv_kxk edge: C*C*k*k + 2C, 5 cells per stage at C = 16, 32, 64
    conv3 = sum(5 * 6 * (c * c * 9 + 2 * c) for c in (16, 32, 64))
    assert n_params(build_network(uniform("nor_conv_3x3"))) == skeleton + conv3 == 1_531_546
    conv1 = sum(5 * 6 * (c * c + 2 * c) for c in (16, 32, 64))
    assert n_params(build_network(uniform("nor_conv_1x1"))) == skeleton + conv1


def test_forward_shapes_and_zero_nodes():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 32, 32)
    for cell in (CELL, uniform("none"), "|none~0|+|none~0|none~1|+|skip_connect~0|none~1|nor_conv_1x1~2|"):
        net = build_network(cell, num_classes=7, cells_per_stage=1)
        assert not net.training
        assert net(x).shape == (2, 7)
    zero_cell = build_network(uniform("none"), cells_per_stage=1).cells[0]
    assert torch.equal(zero_cell(torch.randn(2, 16, 32, 32)), torch.zeros(2, 16, 32, 32))


def test_build_network_rejects_bad_arguments():
    with pytest.raises(ValueError, match="cells_per_stage"):
        build_network(CELL, cells_per_stage=0)
    with pytest.raises(ValueError, match="bad cell string"):
        build_network("|conv~0|")
