"""Compiling with TorchInductor and timing each kernel: failures are records, resumes add nothing twice."""

import json
import math

import pytest

from coderlm.cli import main
from coderlm.collect.kernels.collect import Timing, collect_kernels, compile_kernels
from coderlm.data import read_dataset

HEADER = "import os\nimport torch\nimport torch.nn as nn\n\n"
INPUTS = (
    "\n\ndef get_inputs():\n    return [torch.rand(batch_size, width)]\n\n\ndef get_init_inputs():\n    return []\n"
)
GOOD = (
    HEADER
    + """class Model(nn.Module):
    def forward(self, x):
        y = torch.relu(x) * 2.0 + 1.0
        return torch.softmax(y, dim=-1) - y.mean(dim=-1, keepdim=True)


batch_size = 512
width = 1024
"""
    + INPUTS
)
BROKEN = (
    HEADER
    + """class Model(nn.Module):
    def forward(self, x):
        return x @ x  # (n, w) @ (n, w): shapes do not match


batch_size = 64
width = 32
"""
    + INPUTS
)
HANGS = (
    HEADER
    + """class Model(nn.Module):
    def __init__(self):
        super().__init__()
        while True:
            pass

    def forward(self, x):
        return x


batch_size = 64
width = 32
"""
    + INPUTS
)
CRASHES = (
    HEADER
    + """class Model(nn.Module):
    def __init__(self):
        super().__init__()
        os.kill(os.getpid(), 9)

    def forward(self, x):
        return x


batch_size = 64
width = 32
"""
    + INPUTS
)


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    data = tmp_path_factory.mktemp("kernelbench")
    (data / "level2").mkdir()
    for number, (name, source) in enumerate(
        [("Good", GOOD), ("Broken", BROKEN), ("Hangs", HANGS), ("Crashes", CRASHES)], start=1
    ):
        (data / "level2" / f"{number}_{name}.py").write_text(source)
    out = tmp_path_factory.mktemp("out")
    timing = Timing(
        repeats=5, warmups=1, min_us=0.0, rerun_share=1.0, timeout_s=60.0
    )  # a loaded machine compiles slowly
    report = collect_kernels(out, data=data, levels=["level2"], draws=1, workers=2, timing=timing, progress=False)
    return data, out, report, timing


def test_failures_are_recorded_with_their_reason_and_the_run_goes_on(collected):
    _, out, report, _ = collected
    assert report.tried == 4 and report.kernels >= 1
    runs = {row["program"].split("/")[-1]: row for row in map(json.loads, (out / "kernelbench.runs.jsonl").open())}
    assert runs["1_Good"]["status"] == "ok"
    assert runs["2_Broken"]["status"] == "error" and runs["2_Broken"]["stage"] == "compile"
    assert runs["3_Hangs"]["status"] == "timeout" and "60 s" in runs["3_Hangs"]["error"]
    assert runs["4_Crashes"]["status"] == "crashed" and "-9" in runs["4_Crashes"]["error"]
    stats = json.loads((out / "kernelbench.stats.json").read_text())
    assert stats["programs"] == {"ok": 1, "error": 1, "timeout": 1, "crashed": 1}


def test_rows_hold_kernel_source_latency_and_the_machine(collected):
    _, out, _, _ = collected
    rows = list(read_dataset(out / "kernelbench.jsonl"))
    kernels = [r for r in rows if r.task == "inductor_cpp"]
    graphs = [r for r in rows if r.task == "inductor_cpp_graph"]
    assert kernels and len(graphs) == 1
    for row in kernels:
        assert row.text.startswith("// cpp_fused_") and 'extern "C"' in row.text
        assert row.targets["latency_us"] > 0 and row.meta["rerun_latency_us"] > 0  # rerun_share 1.0
        (shape,) = row.meta["shapes"]  # scaled down from (512, 1024)
        assert row.group == "kernelbench/level2/1_Good" and len(shape) == 2 and shape[0] * shape[1] <= 512 * 1024
        assert row.meta["machine"]["threads"] == 1 and row.meta["kind"] in ("softmax", "reduction", "pointwise")
    graph = graphs[0].text
    assert graph.startswith("cpp_fused_") and "def call(" in graph and "benchmark_compiled_module" not in graph
    assert graphs[0].meta["kernels"] == len(kernels) and graphs[0].targets["latency_us"] > 0


def test_resume_adds_nothing_twice_and_other_machines_are_refused(collected):
    data, out, _, timing = collected
    before = (out / "kernelbench.jsonl").read_text()
    report = collect_kernels(out, data=data, levels=["level2"], draws=1, timing=timing, progress=False)
    assert report.already_done == 4 and report.tried == 0
    assert (out / "kernelbench.jsonl").read_text() == before
    row = json.loads(before.splitlines()[0])
    row["meta"]["machine"]["cpu"] = "another CPU"
    other = out / "other"
    other.mkdir()
    (other / "kernelbench.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(ValueError, match=r"another CPU.*latencies of two machines do not mix"):
        collect_kernels(other, data=data, levels=["level2"], draws=1, timing=timing, progress=False)


def test_predict_reads_kernel_sources_and_compiles_pytorch_programs(collected, tmp_path, capsys):
    data, out, _, _ = collected
    program = data / "level2" / "1_Good.py"
    names = [name for name, _ in compile_kernels(program)]
    run = tmp_path / "run"
    flags = "--encoder-dim 32 --decoder-dim 32 --encoder-heads 4 --decoder-heads 4 --steps 2 --no-progress"
    assert main(["train", "--data", str(out / "kernelbench.jsonl"), "--out", str(run), *flags.split()]) == 0
    capsys.readouterr()
    kernel = tmp_path / "kernel.cpp"
    kernel.write_text(next(r for r in read_dataset(out / "kernelbench.jsonl") if r.task == "inductor_cpp").text)
    assert main(["predict", "--model", str(run), "--kernels", str(program), str(kernel), "--num-samples", "4"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["input"] for r in records] == [f"{program}:{name}" for name in names] + [str(kernel)]
    assert all(math.isfinite(r["latency_us"]) for r in records)  # a 2-step model: any number, even negative
    assert main(["predict", "--model", str(run), "--kernels", str(data / "level2" / "2_Broken.py")]) == 2
    assert "error while compiling (compile)" in capsys.readouterr().err
