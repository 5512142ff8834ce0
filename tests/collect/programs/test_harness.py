"""Harnesses: each language calls a LeetCode-style solution on JSON cases, is checked, and gets exact labels."""

import dataclasses
import json
import shutil
import subprocess

import pytest

from coderlm.collect.programs.harness import Cases, HarnessJob, find_method, profile_harness, render
from coderlm.collect.programs.leetcode_examples import ExpectedCheck
from coderlm.collect.programs.runners import load_runners
from coderlm.collect.programs.support import SHIM_SOURCE

RUNNERS = load_runners()
FAST = {"repeats": 2, "warmups": 1, "timeout_s": 20.0}

# Linked List in Binary Tree (LeetCode 1367): a ListNode and a TreeNode in, a bool out, in every language
SUBPATH = {
    "python": """class Solution:
    def isSubPath(self, head: Optional[ListNode], root: Optional[TreeNode]) -> bool:
        def down(h, t):
            return h is None or (t is not None and h.val == t.val and (down(h.next, t.left) or down(h.next, t.right)))
        if root is None:
            return False
        return down(head, root) or self.isSubPath(head, root.left) or self.isSubPath(head, root.right)
""",
    "cpp": """class Solution {
public:
    bool down(ListNode* h, TreeNode* t) {
        if (!h) return true;
        if (!t || h->val != t->val) return false;
        return down(h->next, t->left) || down(h->next, t->right);
    }
    bool isSubPath(ListNode* head, TreeNode* root) {
        if (!root) return false;
        vector<int> scratch(8, 0);  // something for the counters
        return down(head, root) || isSubPath(head, root->left) || isSubPath(head, root->right);
    }
};
""",
    "java": """class Solution {
    public boolean isSubPath(ListNode head, TreeNode root) {
        if (root == null) return false;
        List<Integer> scratch = new ArrayList<>(List.of(1, 2, 3));
        return down(head, root) || isSubPath(head, root.left) || isSubPath(head, root.right);
    }
    private boolean down(ListNode h, TreeNode t) {
        if (h == null) return true;
        if (t == null || h.val != t.val) return false;
        return down(h.next, t.left) || down(h.next, t.right);
    }
}
""",
    "go": """func isSubPath(head *ListNode, root *TreeNode) bool {
	if root == nil {
		return false
	}
	scratch := make([]int, 0, 8)
	_ = append(scratch, 1)
	return down(head, root) || isSubPath(head, root.Left) || isSubPath(head, root.Right)
}

func down(h *ListNode, t *TreeNode) bool {
	if h == nil {
		return true
	}
	if t == nil || h.Val != t.Val {
		return false
	}
	return down(h.Next, t.Left) || down(h.Next, t.Right)
}
""",
    "typescript": """function isSubPath(head: ListNode | null, root: TreeNode | null): boolean {
    const down = (h: ListNode | null, t: TreeNode | null): boolean =>
        h === null || (t !== null && h.val === t.val && (down(h.next, t.left) || down(h.next, t.right)));
    if (root === null) return false;
    const scratch: number[] = [1, 2, 3];
    return down(head, root) || isSubPath(head, root.left) || isSubPath(head, root.right);
}
""",
    "javascript": """var isSubPath = function (head, root) {
    const down = (h, t) =>
        h === null || (t !== null && h.val === t.val && (down(h.next, t.left) || down(h.next, t.right)));
    if (root === null) return false;
    const scratch = [1, 2, 3];
    return down(head, root) || isSubPath(head, root.left) || isSubPath(head, root.right);
};
""",
}
TREE = [1, 4, 4, None, 2, 2, None, 1, None, 6, 8, None, None, None, None, 1, 3]
SUBPATH_CASES = Cases(
    "is_sub_path",
    (([4, 2, 8], TREE), ([1, 4, 2, 6], TREE), ([1, 4, 2, 6, 8], TREE), ([1], [])),
    ("ListNode", "TreeNode"),
    False,
    ExpectedCheck((True, True, False, False)),
    "examples",
)
LABELS = {
    "python": {"heap_peak_bytes"},
    "cpp": {"heap_peak_bytes", "alloc_bytes", "alloc_count"},
    "java": {"alloc_bytes"},
    "go": {"alloc_bytes", "alloc_count"},
    "typescript": {"alloc_bytes"},
    "javascript": {"alloc_bytes"},
}


def job(language, code, cases, method=None):
    method = method or find_method(code, cases.method)
    return HarnessJob(f"{language}/t/1", language, "t", "Solution", code, "", method, cases)


def available(language):
    problem = RUNNERS[language].harness_missing()
    if problem:
        pytest.skip(problem)
    return RUNNERS[language]


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(SUBPATH))
def test_each_language_checks_linked_lists_and_trees_with_repeatable_exact_labels(language):
    runner = available(language)
    record = profile_harness(job(language, SUBPATH[language], SUBPATH_CASES), runner, passes=2, **FAST)
    assert record["status"] == "passed", record.get("stderr_tail")
    assert set(record["labels"]) == LABELS[language] | {"runtime_s"}
    assert record["memory_label"] in LABELS[language]
    assert record["labels"][record["memory_label"]] > 0 and record["labels"]["runtime_s"] > 0
    again = record["reruns"][0]
    assert {k: again[k] for k in LABELS[language]} == {k: record["labels"][k] for k in LABELS[language]}
    wrong = dataclasses.replace(SUBPATH_CASES, check=ExpectedCheck((True, False, False, False)))
    failed = profile_harness(job(language, SUBPATH[language], wrong), runner, **FAST)
    assert failed["status"] == "wrong_answer" and "example 1" in failed["stderr_tail"]


TWO = """class Solution:
    def twoSum(self, nums: List[int], target: int) -> List[int]:
        seen = {}
        for i, x in enumerate(nums):
            if target - x in seen:
                return [i, seen[target - x]]
            seen[x] = i
"""


def two_sum(any_order):
    check = ExpectedCheck(([0, 1], [1, 2]), any_order=any_order)
    return Cases("twoSum", (([2, 7, 11, 15], 9), ([3, 2, 4], 6)), ("value", "value"), False, check, "examples")


def test_order_insensitive_answers_pass_only_where_the_problem_says_so():
    runner = available("python")
    assert profile_harness(job("python", TWO, two_sum(True)), runner, **FAST)["status"] == "passed"
    wrong = profile_harness(job("python", TWO, two_sum(False)), runner, **FAST)
    assert wrong["status"] == "wrong_answer" and "got [1, 0], expected [0, 1]" in wrong["stderr_tail"]


def test_in_place_methods_are_checked_on_their_argument_and_failures_are_recorded():
    runner = available("python")
    code = "class Solution:\n    def sortColors(self, nums: List[int]) -> None:\n        nums.sort()\n"
    cases = Cases("sortColors", (([2, 0, 1],),), ("value",), True, ExpectedCheck(([0, 1, 2],), argument=0), "examples")
    assert profile_harness(job("python", code, cases), runner, **FAST)["status"] == "passed"
    broken = code.replace("nums.sort()", "raise ValueError('no')")
    failed = profile_harness(job("python", broken, cases), runner, **FAST)
    assert failed["status"] == "failed" and "ValueError: no" in failed["stderr_tail"]
    endless = code.replace("nums.sort()", "while True:\n            pass")
    assert profile_harness(job("python", endless, cases), runner, **FAST | {"timeout_s": 1.0})["status"] == "timeout"


def test_cpp_compile_error_and_contained_memory_bomb():
    runner = available("cpp")
    broken = profile_harness(job("cpp", "class Solution { int f( };", two_sum(True), "f"), runner, **FAST)
    assert broken["status"] == "compile_error" and "error" in broken["stderr_tail"]
    bomb = (
        "class Solution { public: vector<int> twoSum(vector<int>& n, int t) {"
        " vector<vector<char>> hog; while (true) hog.emplace_back(1 << 24, 1); } };"
    )
    record = profile_harness(job("cpp", bomb, two_sum(True)), runner, **FAST)
    assert record["status"] in ("crashed", "failed")  # std::bad_alloc at the address-space limit


HANG = {
    "python": "class Solution:\n    def f(self, n: int) -> int:\n        while True:\n            n += 1\n",
    "cpp": "class Solution { public: int f(int n) { volatile long i = 0; while (true) i++; return n; } };",
    "java": "class Solution { public int f(int n) { long i = 1; while (i > 0) i = i % 7 + 1; return n; } }",
    "go": "func f(n int) int {\n\tfor {\n\t\tn++\n\t}\n}\n",
    "typescript": "function f(n: number): number { while (true) { n++; } }",
    "javascript": "var f = function (n) { while (true) { n++; } };",
}


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(HANG))
def test_a_solution_that_never_returns_is_killed_in_every_language(language):
    runner = available(language)
    cases = Cases("f", ((1,),), ("value",), False, ExpectedCheck((1,)), "examples")
    record = profile_harness(job(language, HANG[language], cases), runner, **FAST | {"timeout_s": 1.0})
    assert record["status"] == "timeout" and record["failed_run"] == "memory 0"


def test_find_method_and_render():
    assert find_method("int twoSum(int a) { return twoSum(a); }", "two_sum") == "twoSum"
    assert find_method("public int TwoSum()", "two_sum") == "TwoSum"
    assert find_method("int other()", "two_sum") is None
    assert find_method("twoSum(); two_sum();", "two_sum") == "twoSum"  # the camel-case spelling wins
    source = render(RUNNERS["javascript"].harness, "var f = () => 1;", "f")
    assert "var f = () => 1;" in source and "const fn = f;" in source and "{{" not in source


def test_alloc_shim_counts_exactly_and_from_many_threads(tmp_path):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    program = tmp_path / "t.c"
    program.write_text(
        "#include <dlfcn.h>\n#include <pthread.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
        "void *work(void *x) { for (int i = 0; i < 1000; i++) free(malloc(40)); return x; }\n"
        'int main(void) { void (*start)(long *) = dlsym(RTLD_DEFAULT, "coderlm_alloc_start");\n'
        '  void (*stop)(long *) = dlsym(RTLD_DEFAULT, "coderlm_alloc_stop"); long c[4];\n'
        "  start(c); char *a = malloc(1000); a = realloc(a, 5000); pthread_t t[4];\n"
        "  for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, work, 0);\n"
        "  for (int i = 0; i < 4; i++) pthread_join(t[i], 0);\n"
        '  free(a); stop(c); printf("%ld %ld %ld %ld\\n", c[0], c[1], c[2], c[3]); return 0; }\n'
    )
    subprocess.run([compiler, "-O0", "-o", tmp_path / "t", program, "-lpthread"], check=True)  # -O2 elides malloc+free
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", tmp_path / "shim.so", SHIM_SOURCE], check=True)

    def counters():
        env = {"LD_PRELOAD": str(tmp_path / "shim.so")}
        return subprocess.run([tmp_path / "t"], env=env, capture_output=True, text=True, check=True).stdout.split()

    first = [int(x) for x in counters()]
    assert first[1:] == [int(x) for x in counters()][1:]  # exact; the peak depends on how threads interleave
    peak, total, count, live = first
    # malloc(1000) and realloc to 5000 (usable sizes 1000 and 5000 + glibc's 8 bytes, rounded to 16), 4000 x 40
    assert count >= 2 + 4000 and total >= 1000 + 5000 + 4000 * 40 and live < 2000  # threads keep their TLS
    assert 5000 <= peak < 5000 + 1000 + 4 * 64  # the big block, plus at most a little from each thread


def test_cases_validate_kinds():
    with pytest.raises(ValueError, match="kinds must be among"):
        Cases("f", ((1,),), ("Graph",), False, ExpectedCheck((1,)), "examples")
    assert json.loads(two_sum(True).file_text()) == [[[[2, 7, 11, 15], 9], [[3, 2, 4], 6]], False, ["value", "value"]]


def test_python_has_what_leetcode_python_provides():
    runner = available("python")
    pytest.importorskip("sortedcontainers")
    code = (
        "class Solution:\n    def kth(self, nums: List[int], k: int) -> str:\n"
        "        sl = SortedList(nums)\n        return ascii_lowercase[sl[k]] + str(inf)\n"
    )
    cases = Cases("kth", (([5, 1, 3], 1),), ("value", "value"), False, ExpectedCheck(("dinf",)), "examples")
    record = profile_harness(job("python", code, cases), runner, **FAST)
    assert record["status"] == "passed", record.get("stderr_tail")
