"""Grown-case rows (``coderlm collect programs --grown-rows``): each passing program measured again on its
largest case made larger, into ``<corpus>.grown.jsonl``, resumable."""

import json

import pytest

from coderlm.cli import main
from coderlm.collect.programs.collect import collect_programs
from coderlm.collect.programs.grown import (
    INT_CAP,
    collect_grown_rows,
    grow,
    grown_case,
    grown_jobs,
    largest_case,
    sized_case,
)
from coderlm.collect.programs.harness import Cases, HarnessJob
from coderlm.data import read_dataset
from coderlm.options import OptionError
from tests.collect.programs.test_add_language import TOY_SOLUTION
from tests.collect.programs.test_cases import toy_leetcode


def test_lists_and_strings_repeat_and_integer_arguments_multiply():
    assert grow([3, 1], 4) == [3, 1, 3, 1, 3, 1, 3, 1]  # elements kept: values stay in the problem's range
    assert grow([[0, 1], [1, 2]], 2) == [[0, 1], [1, 2], [0, 1], [1, 2]]  # pairs and rows stay whole
    assert grow("ab", 3) == "ababab"
    assert grow(12, 8) == 96 and grow(-5, 8) == -40 and grow(0, 8) == 0
    assert grow(INT_CAP, 2) == INT_CAP  # past the cap: as it was (a loop to n would only time out)
    assert grow(True, 8) is True and grow(None, 8) is None and grow(2.5, 8) == 2.5
    assert grow(7, 8, top=False) == 7  # a list's element is a value, not a size
    assert grown_case(([1, 2], 3, "x", False), 2) == ([1, 2, 1, 2], 6, "xx", False)


def test_the_largest_case_grows_by_each_factor_and_is_not_checked():
    cases = Cases("f", (([1, 2, 3],), ([],), ([1, 2, 3, 4],)), ("value",), False, lambda r, a: "wrong", "examples")
    job = HarnessJob("python/leetcode/1/Solution.py", "python", "leetcode/1", "Solution.py", "code", "", "f", cases)
    assert largest_case(cases.args) == 2
    grown = grown_jobs(job, (2, 3))
    assert [(j.key, meta) for j, meta in grown] == [
        ("python/leetcode/1/Solution.py#case2x2", {"case": 2, "grown": 2}),
        ("python/leetcode/1/Solution.py#case2x3", {"case": 2, "grown": 3}),
    ]
    assert grown[1][0].cases.args == (([1, 2, 3, 4] * 3,),)
    assert grown[0][0].cases.check([["anything"]], None) is None  # a grown case's answer is unknown
    assert grown[0][0].code == job.code and grown[0][0].problem == job.problem
    empty = HarnessJob("k", "python", "p", "s", "c", "", "f", Cases("f", (), ("value",), False, print, "sdk"))
    assert grown_jobs(empty) == []
    for bad in ((), (1,), (8, 0)):
        with pytest.raises(OptionError, match="grow-factors must be one or more integers >= 2"):
            grown_jobs(job, bad)


def test_the_largest_integer_is_set_to_each_size_and_nothing_else_changes():
    assert sized_case(([1, 2], 5, 3), 1000) == ([1, 2], 1000, 3)
    assert sized_case((7, 7), 100) == (100, 7)  # the first of equals
    assert sized_case(([1, 2], "ab"), 100) is None  # no integer argument
    assert sized_case((True, 1, [5000]), 100) is None  # flags, 0/1 and list elements are not sizes
    assert sized_case((5000,), 1000) is None  # only ever larger
    cases = Cases("f", (([1, 2, 3], 4), ([9], 2000)), ("value", "value"), False, print, "sdk")
    job = HarnessJob("python/leetcode/1/Solution.py", "python", "leetcode/1", "Solution.py", "code", "", "f", cases)
    grown = grown_jobs(job, (8,), int_sizes=(1000, 100000))
    assert [(j.key.split("#")[1], meta) for j, meta in grown] == [
        ("case0x8", {"case": 0, "grown": 8}),
        ("case0n1000", {"case": 0, "int": 1000}),
        ("case0n100000", {"case": 0, "int": 100000}),
    ]
    assert grown[2][0].cases.args == (([1, 2, 3], 100000),)
    for bad in ((1,), (1000, INT_CAP + 1)):
        with pytest.raises(OptionError, match="int-sizes must be integers from 2 to 10,000,000"):
            grown_jobs(job, (8,), bad)


def test_grown_rows_of_a_collected_dataset_end_to_end(tmp_path):
    out, options = toy_leetcode(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"leetcode\.jsonl: no dataset here"):
        collect_grown_rows(out, "leetcode", ["toy"], workers=1, **options)
    assert collect_programs(out, "leetcode", ["toy"], workers=1, **options).passed == 1
    report = collect_grown_rows(out, "leetcode", ["toy"], factors=(8,), workers=1, **options)
    assert (report.requested, report.tried, report.passed) == (1, 1, 1)
    (row,) = read_dataset(out / "leetcode.grown.jsonl")
    # the largest case, [1,2,3,4,5] (index 2), repeated 8 times: 40 nodes, stated in the inputs line
    assert row.meta["case"] == 2 and row.meta["grown"] == 8 and row.meta["key"].endswith("Solution.toy#case2x8")
    assert row.text.startswith("// inputs: 1 case; largest: list[40]; 40 values in all\n" + TOY_SOLUTION)
    assert row.targets["list_nodes_built"] == 40 and row.group == "leetcode/99001"
    more = collect_grown_rows(out, "leetcode", ["toy"], factors=(8, 64), workers=1, **options)  # adds x64
    assert (more.requested, more.already_done, more.tried, more.passed) == (2, 1, 1, 1)
    rows = read_dataset(out / "leetcode.grown.jsonl")
    assert [r.targets["list_nodes_built"] for r in rows] == [40, 320]
    log = [json.loads(line) for line in (out / "leetcode.grown.runs.jsonl").read_text().splitlines()]
    assert [entry["status"] for entry in log] == ["passed", "passed"]


def test_grown_rows_refuse_a_corpus_without_harnesses_and_bad_factors(tmp_path, capsys):
    with pytest.raises(OptionError, match="grown-rows needs a corpus run through harnesses"):
        collect_grown_rows(tmp_path, "mbxp", ["python"], progress=False)
    code = main(["collect", "programs", "--corpus", "mbxp", "--out", str(tmp_path / "o"), "--grown-rows"])
    assert code != 0 and not (tmp_path / "o").exists()  # refused before the corpus runs
    assert "grown-rows needs a corpus run through harnesses (leetcode)" in capsys.readouterr().err
    base = ["collect", "programs", "--corpus", "leetcode", "--out", str(tmp_path / "o"), "--grown-rows"]
    assert main([*base, "--grow-factors", "8,1"]) != 0 and not (tmp_path / "o").exists()
    assert "grow-factors must be one or more integers >= 2, got [8, 1]" in capsys.readouterr().err
    assert main([*base, "--int-sizes", "1000,0"]) != 0 and not (tmp_path / "o").exists()
    assert "int-sizes must be integers from 2 to 10,000,000, got [1000, 0]" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse names the flag and the value
        main([*base, "--grow-factors", "8,big"])
    assert "--grow-factors: expected comma-separated integers, got '8,big'" in capsys.readouterr().err
