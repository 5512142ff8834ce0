"""Compiling with TorchInductor and timing each kernel: failures are records, resumes add nothing twice."""

import json
import math

import pytest

from coderlm.cli import main
from coderlm.cli.predict import read_inputs
from coderlm.collect.kernels.collect import Timing, collect_kernels, compile_kernels, program_jobs
from coderlm.collect.kernels.dataset import rewrite_texts
from coderlm.data import read_dataset
from coderlm.options import OptionError

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
    # a cold Inductor compile on a loaded 2-core machine took over 60 s once (CI beside a training run)
    timing = Timing(repeats=5, warmups=1, min_us=0.0, rerun_share=1.0, timeout_s=120.0)
    report = collect_kernels(out, data=data, levels=["level2"], draws=1, workers=2, timing=timing, progress=False)
    return data, out, report, timing


def test_failures_are_recorded_with_their_reason_and_the_run_goes_on(collected):
    _, out, report, _ = collected
    assert report.tried == 4 and report.kernels >= 1
    runs = {row["program"].split("/")[-1]: row for row in map(json.loads, (out / "kernelbench.runs.jsonl").open())}
    assert runs["1_Good"]["status"] == "ok"
    assert runs["2_Broken"]["status"] == "error" and runs["2_Broken"]["stage"] == "compile"
    assert runs["3_Hangs"]["status"] == "timeout" and "120 s" in runs["3_Hangs"]["error"]
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
        name, loops, *_ = row.text.splitlines()
        assert name.startswith("// cpp_fused_") and loops.startswith("// loops: ") and 'extern "C"' in row.text
        assert "static_cast<int64_t>(0L)" not in row.text and row.meta["text_revision"] == 2
        assert row.targets["latency_us"] > 0 and row.meta["rerun_latency_us"] > 0  # rerun_share 1.0
        (shape,) = row.meta["shapes"]  # scaled down from (512, 1024)
        assert row.group == "kernelbench/level2/1_Good" and len(shape) == 2 and shape[0] * shape[1] <= 512 * 1024
        assert row.meta["machine"]["threads"] == 1 and row.meta["kind"] in ("softmax", "reduction", "pointwise")
    graph = graphs[0].text
    assert graph.startswith("// loops: ") and "\ncpp_fused_" in graph and "def call(" in graph
    assert "benchmark_compiled_module" not in graph
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


def test_older_texts_are_rewritten_in_place_and_refused_until_then(collected, tmp_path):
    data, out, _, timing = collected
    rows = [json.loads(line) for line in (out / "kernelbench.jsonl").read_text().splitlines()]
    kernel = next(r for r in rows if r["task"] == "inductor_cpp")
    old_kernel = kernel | {"meta": {k: v for k, v in kernel["meta"].items() if k != "text_revision"}}
    old_kernel["text"] = f"// {kernel['meta']['kernel']}\n" + (
        'extern "C" void kernel(float* out_ptr0)\n{\n'
        "    for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(4096L); x0+=static_cast<int64_t>(16L))\n"
        "    {\n        out_ptr0[x0] = 1;\n    }\n}\n"
    )
    old_graph = {**old_kernel, "task": "inductor_cpp_graph", "text": "def call(args):\n    return args\n"}
    (tmp_path / "kernelbench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (old_kernel, old_graph)))
    with pytest.raises(ValueError, match=r"kernelbench.jsonl:1: text revision 1.*--rewrite-text"):
        collect_kernels(tmp_path, data=data, levels=["level2"], draws=1, timing=timing, progress=False)
    assert main(["collect", "kernels", "--out", str(tmp_path), "--rewrite-text"]) == 0
    new_kernel, new_graph = read_dataset(tmp_path / "kernelbench.jsonl")
    assert new_kernel.text.splitlines()[1] == "// loops: 256 iterations (256=256)"
    assert "x0<4096; x0+=16)" in new_kernel.text and new_kernel.meta["text_revision"] == 2
    assert new_graph.text == old_graph["text"] and new_graph.meta["text_revision"] == 2  # no loop: no summary
    assert new_kernel.targets == old_kernel["targets"]
    assert rewrite_texts(tmp_path / "kernelbench.jsonl") == 0  # already current


def test_predict_reads_kernel_sources_and_compiles_pytorch_programs(collected, tmp_path, capsys):
    data, out, _, _ = collected
    program = data / "level2" / "1_Good.py"
    names = [name for name, _ in compile_kernels(program)]
    run = tmp_path / "run"
    flags = "--encoder-dim 32 --decoder-dim 32 --encoder-heads 4 --decoder-heads 4 --steps 2 --no-progress"
    assert main(["train", "--data", str(out / "kernelbench.jsonl"), "--out", str(run), *flags.split()]) == 0
    capsys.readouterr()
    kernel, raw = tmp_path / "kernel.cpp", tmp_path / "raw.cpp"
    text = next(r for r in read_dataset(out / "kernelbench.jsonl") if r.task == "inductor_cpp").text
    kernel.write_text(text)
    name, _, rest = text.partition("\n")
    raw.write_text(name + "\n" + rest.partition("\n")[2])  # without its loop summary, as a user may have it
    inputs = [str(program), str(kernel), str(raw)]
    assert main(["predict", "--model", str(run), "--kernels", *inputs, "--num-samples", "4"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["input"] for r in records] == [f"{program}:{name}" for name in names] + [str(kernel), str(raw)]
    assert all(math.isfinite(r["latency_us"]) for r in records)  # a 2-step model: any number, even negative
    assert read_inputs([str(raw)], kernels=True) == [(str(raw), text)]  # the summary restored: the same text
    assert main(["predict", "--model", str(run), "--kernels", str(data / "level2" / "2_Broken.py")]) == 2
    assert "error while compiling (compile)" in capsys.readouterr().err


LIBRARY_ONLY = (
    HEADER
    + """class Model(nn.Module):
    def forward(self, x):
        return x @ x.T  # a library call (extern mm): Inductor generates no kernel of its own


batch_size = 256
width = 128
"""
    + INPUTS
)


def test_a_program_of_library_calls_only_is_not_drawn_again(tmp_path):
    data, out = tmp_path / "kernelbench", tmp_path / "out"
    (data / "level1").mkdir(parents=True)
    (data / "level1" / "1_Matmul.py").write_text(LIBRARY_ONLY)
    timing = Timing(repeats=3, warmups=1, min_us=0.0, rerun_share=0.0, timeout_s=120.0)
    collect_kernels(out, data=data, levels=["level1"], draws=4, timing=timing, progress=False)
    runs = [json.loads(line) for line in (out / "kernelbench.runs.jsonl").open()]
    assert len(runs) >= 2 and [run["status"] for run in runs] == ["ok"] + ["skipped"] * (len(runs) - 1)
    assert runs[0]["kernels"] == runs[0]["dropped_fast"] == 0 and runs[0]["extern_calls"]
    assert set(runs[0]["seconds"]) == {"build", "compile", "capture", "wait", "time"}
    assert all(run["stage"] == "barren" and "library calls only" in run["error"] for run in runs[1:])
    graphs = list(read_dataset(out / "kernelbench.jsonl"))  # the one draw run keeps its whole-graph row
    assert [row.task for row in graphs] == ["inductor_cpp_graph"]
    report = collect_kernels(out, data=data, levels=["level1"], draws=8, timing=timing, progress=False)
    added = [json.loads(line) for line in (out / "kernelbench.runs.jsonl").open()][len(runs) :]
    assert report.tried == len(added) >= 1 and all(run["stage"] == "barren" for run in added)  # read from the log


def test_a_time_limit_stops_starting_programs_and_a_resume_goes_on(tmp_path):
    data, out = tmp_path / "kernelbench", tmp_path / "out"
    (data / "level1").mkdir(parents=True)
    for number in (1, 2, 3):
        (data / "level1" / f"{number}_Matmul.py").write_text(LIBRARY_ONLY)
    timing = Timing(repeats=3, warmups=1, min_us=0.0, rerun_share=0.0, timeout_s=120.0)
    # half a second: the first program starts within it even on a loaded machine (a 6 ms limit did not, under
    # two training runs), and outlasts it (its worker process alone imports torch)
    first = collect_kernels(
        out, data=data, levels=["level1"], draws=1, timing=timing, max_minutes=0.5 / 60, progress=False
    )
    assert first.tried == 1 and first.left == 2  # the first program started before the limit, no other
    rest = collect_kernels(out, data=data, levels=["level1"], draws=1, timing=timing, progress=False)
    assert rest.already_done == 1 and rest.tried == 2 and rest.left == 0
    with pytest.raises(OptionError, match="max_minutes"):
        collect_kernels(out, data=data, levels=["level1"], max_minutes=0, progress=False)


def test_kernelbench_jobs_come_draw_by_draw(tmp_path):
    (tmp_path / "level1").mkdir()
    for number in (1, 2):
        (tmp_path / "level1" / f"{number}_Good.py").write_text(GOOD)
    jobs = list(program_jobs("kernelbench", data=tmp_path, draws=2, levels=["level1"]))
    assert [(job.program.split("/")[-1], job.draw) for job in jobs] == [
        ("1_Good", 0),
        ("2_Good", 0),
        ("1_Good", 1),
        ("2_Good", 1),
    ]
