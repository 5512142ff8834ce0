"""KernelBench programs scaled down, and generated programs: sources that build on any machine."""

import hashlib
from pathlib import Path

import pytest
import torch

from coderlm.collect.kernels.inductor import kernel_kind
from coderlm.collect.kernels.programs import (
    input_elements,
    kernelbench_files,
    scaled_draws,
    scaled_source,
    size_constants,
    with_constants,
)
from coderlm.collect.kernels.synthetic import synthetic_program
from coderlm.collect.kernels.texts import kernel_text
from coderlm.collect.programs.corpora import shared_data

PROGRAM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, features, kernel_size):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return torch.relu(self.linear(x))

batch_size = 2048 * 2
features = 512; kernel_size = 3
height = width = 64
pair = (256, 3)

def get_inputs():
    return [torch.rand(batch_size, features)]

def get_init_inputs():
    return [features, kernel_size]
"""


def test_size_constants_reads_literals_expressions_tuples_and_shared_lines():
    assert size_constants(PROGRAM) == {
        "batch_size": 4096,
        "features": 512,
        "kernel_size": 3,
        "height": 64,
        "width": 64,
        "pair": (256, 3),
    }


def test_with_constants_rewrites_only_the_named_assignments():
    text = with_constants(PROGRAM, {"batch_size": 8, "height": 16})
    assert size_constants(text) == size_constants(PROGRAM) | {"batch_size": 8, "height": 16}
    assert "kernel_size = 3" in text and "def get_inputs" in text  # the shared line keeps its other statement
    compile(text, "<scaled>", "exec")


@pytest.mark.parametrize("target", [10_000, 300_000])
def test_scaled_source_brings_the_inputs_near_the_target(target):
    text = scaled_source(PROGRAM, target)
    held = input_elements(text)
    assert target / 4 <= held <= target
    assert size_constants(text)["kernel_size"] == 3  # not a size
    assert size_constants(text)["features"] % 8 == 0  # multiples of 8 stay multiples of 8


def test_draws_are_distinct_and_unscalable_programs_say_why(tmp_path):
    path = tmp_path / "level1" / "7_Linear.py"
    path.parent.mkdir()
    path.write_text(PROGRAM)
    draws = list(scaled_draws(path, 4))
    assert len({d.source for d in draws}) == len(draws) >= 2
    assert all(d.program == "kernelbench/level1/7_Linear" and d.level == "level1" and not d.skip for d in draws)
    fixed = tmp_path / "level1" / "8_Fixed.py"  # sizes written into get_inputs: nothing to scale
    fixed.write_text(PROGRAM.replace("torch.rand(batch_size, features)", "torch.rand(8192, 4096)"))
    (only,) = scaled_draws(fixed, 3)
    assert "inputs hold 33,554,432 elements" in only.skip


@pytest.mark.parametrize("index", range(6))
def test_synthetic_programs_are_seeded_and_run(index):
    program = synthetic_program(index, seed=1)
    assert program == synthetic_program(index, seed=1) and program.source != synthetic_program(index, 2).source
    namespace = {}
    exec(program.source, namespace)
    dtype = getattr(torch, program.dtype)
    model = namespace["Model"](*namespace["get_init_inputs"]()).to(dtype)
    (x,) = namespace["get_inputs"]()
    assert 1e4 / 4 <= x.numel() <= 4e6 * 4
    assert torch.isfinite(model(x.to(dtype)).float()).all()


@pytest.mark.parametrize("index, seed, digest", [(0, 0, "299f76d6847f141a"), (7, 3, "083fbb06c7a62cde")])
def test_one_chain_writes_the_programs_of_earlier_versions(index, seed, digest):
    # sha256 of the sources the one-chain generator wrote before chains existed: datasets collected then
    # keep their ids' meaning on resume
    assert hashlib.sha256(synthetic_program(index, seed).source.encode()).hexdigest()[:16] == digest


def test_synthetic_chains_are_independent_inputs_of_their_own_shapes():
    program = synthetic_program(3, seed=1, chains=3)
    assert program.program == "synthetic/1-000003x3" and synthetic_program(3, seed=1).program == "synthetic/1-000003"
    namespace = {}
    exec(program.source, namespace)
    dtype = getattr(torch, program.dtype)
    inputs = [x.to(dtype) for x in namespace["get_inputs"]()]
    outputs = namespace["Model"]().to(dtype)(*inputs)
    assert len(inputs) == len(outputs) == 3 and len({x.shape for x in inputs}) == 3
    assert all(f"x{i} = " in program.source for i in range(3)) and "x = " not in program.source
    with pytest.raises(ValueError, match="chains must be >= 1"):
        synthetic_program(0, chains=0)


KINDS = [
    ("cpp_fused_add_relu_0", "pointwise"),
    ("cpp_fused__softmax_add_1", "softmax"),
    ("cpp_fused_native_layer_norm_relu_2", "norm"),
    ("cpp_fused_mean_sub_3", "reduction"),
    ("cpp_fused_convolution_relu_4", "convolution"),
]


@pytest.mark.parametrize("name, kind", KINDS)
def test_kernel_kind_from_the_fused_ops(name, kind):
    assert kernel_kind(name) == kind


def test_kernel_text_keeps_name_and_source_without_boilerplate():
    source = (
        '\n#include <torch/csrc/inductor/cpp_prefix.h>\nextern "C" void kernel(float* out_ptr0)\n{\n    '
        "std::atomic<int> inductor_cpu_integer_div_error{0};\n    out_ptr0[0] = 1;\n}\n"
    )
    assert kernel_text("cpp_fused_fill_0", source) == (
        '// cpp_fused_fill_0\nextern "C" void kernel(float* out_ptr0)\n{\n    out_ptr0[0] = 1;\n}\n'
    )


def test_kernelbench_files_when_present():
    root = shared_data() / "kernelbench"
    if not root.is_dir():
        pytest.skip("../shared/data/kernelbench absent")
    files = kernelbench_files(root)
    assert len(files) == 250 and files[0] == Path(root / "level1" / "1_Square_matrix_multiplication_.py")
