"""Test cases from a LeetCode statement's worked examples, typed by the Python solution's signature.

Every statement shows examples as ``Input: nums = [2,7,11,15], target = 9`` / ``Output: [0,1]`` in
LeetCode's JSON-like encodings. ``examples_cases`` parses them (each value with a JSON decoder, names in
order), takes the parameters' kinds from the annotations of the corpus's Python solution
(``Optional[ListNode]``, ``List[List[int]]``, ...) and checks results with ``ExpectedCheck``: equal after
LeetCode's encodings, floats within 1e-5 (outputs like ``2.00000``), sorted first when the statement says
the answer may be in any order. Not guessed, but skipped with a reason: answers the statement allows
several of ("return any of them"), random or interactive problems, design problems, in-place methods
with more than one argument that could hold the answer, names that differ from the signature's.
"""

from __future__ import annotations

import ast
import dataclasses
import html
import json
import math
import re
from html.parser import HTMLParser
from typing import Any

from coderlm.collect.programs.harness import Cases
from coderlm.collect.programs.leetcode_sdk import UnsupportedError, value_kind

EXAMPLE = re.compile(
    r"Input:?\s*(.*?)\s*Output:?\s*(.*?)\s*(?=Explanation:|Example \d|Constraints:|Input:|Note:|$)", re.S
)
SEVERAL = re.compile(
    r"return (any|either) (of them|one of them|valid|such|one)|any (of them|valid|possible) (answer|one|solution)"
    r"|multiple (valid |possible )?(answers|solutions)|more than one (valid )?(answer|solution)|any (one )?of them"
    r"|(is|are) also (a )?(valid|correct|accepted)",
    re.I,
)
DESIGN = re.compile(r"Input:?\s*\[\s*\"[A-Z]\w*\"\s*,?")  # ["MinStack","push",...]: a class and its operations
ANY_ORDER = re.compile(r"in any order|any order", re.I)
NODES = ("ListNode", "TreeNode")
TYPES = {"int", "float", "bool", "str", "List", "list", "Optional", "None", *NODES}


def statement_text(description_html: str) -> str:
    """A statement's HTML as plain text: paragraphs and list items on their own lines, ``10<sup>4</sup>``
    as ``10^4``, entities decoded."""
    parser = _Text()
    parser.feed(description_html)
    text = html.unescape("".join(parser.parts)).replace("\xa0", " ")
    lines = [line.rstrip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in ("p", "pre", "ul", "ol", "div", "br"):
            self.parts.append("\n")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag == "sup":
            self.parts.append("^")
        elif tag == "img":
            self.parts.append("[image]")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("p", "pre", "ul", "ol", "div"):
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_entityref(self, name: str) -> None:
        self.parts.append(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self.parts.append(f"&#{name};")


def examples_cases(problem: dict, python_code: str | None) -> Cases:
    """The examples of ``problem`` (a corpus row) as cases for ``python_code``'s method; or ``UnsupportedError``."""
    tags = {t.lower() for t in problem.get("tags", [])}
    if "randomized" in tags:
        raise UnsupportedError("random answers")
    if "interactive" in tags:
        raise UnsupportedError("interactive problem")
    if "design" in tags or "data stream" in tags:
        raise UnsupportedError("design problem")
    text = statement_text(problem["description_html"])
    if DESIGN.search(text):
        raise UnsupportedError("design problem", "operations in the examples")
    if SEVERAL.search(text):
        raise UnsupportedError("several valid answers")
    if python_code is None:
        raise UnsupportedError("no Python signature", "no Python solution to type the examples")
    method, names, annotations, returns = python_signature(python_code)
    kinds = tuple(value_kind(a) for a in annotations)
    args, expected = [], []
    for found in EXAMPLE.finditer(text):
        values = _inputs(found.group(1))
        if len(values) == 1 and values[0][0] is None and len(names) == 1:
            values = [(names[0], values[0][1])]
        if [n for n, _ in values] != list(names):
            raise UnsupportedError(
                "examples unparsable", f"inputs {[n for n, _ in values]} for parameters {list(names)}"
            )
        args.append(tuple(v for _, v in values))
        expected.append(_value(found.group(2), whole=True))
    if not args:
        raise UnsupportedError("examples unparsable", "no Input/Output example")
    target = None
    if returns == "None":
        mutable = [i for i, a in enumerate(annotations) if value_kind(a) != "value" or a.startswith(("List", "list"))]
        if len(mutable) != 1:
            raise UnsupportedError("in-place method", f"{len(mutable)} arguments could hold the answer")
        target = mutable[0]
    check = ExpectedCheck(tuple(expected), bool(ANY_ORDER.search(text)), target)
    return Cases(method, tuple(args), kinds, target is not None, check, "examples")


@dataclasses.dataclass(frozen=True)
class ExpectedCheck:
    """Results against the statement's outputs (``argument``: compare that argument after the call instead)."""

    expected: tuple
    any_order: bool = False
    argument: int | None = None

    def __call__(self, results: list, after: list | None) -> str | None:
        for index, want in enumerate(self.expected):
            got = results[index] if self.argument is None else (after or [])[index][self.argument]
            if self.any_order and isinstance(got, list) and isinstance(want, list):
                got, want = sorted(got, key=_order), sorted(want, key=_order)
            if not _same(got, want):
                return (
                    f"wrong answer on example {index}: got {json.dumps(got)[:200]}, expected {json.dumps(want)[:200]}"
                )
        return None


def _order(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _same(got: Any, want: Any) -> bool:
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(_same, got, want))
    if isinstance(want, str) and isinstance(got, int) and not isinstance(got, bool) and len(want) == 1:
        return chr(got) == want  # Go returns a character as a byte
    if isinstance(want, bool) or isinstance(got, bool):
        return got == want and (isinstance(got, bool) or got in (0, 1))
    if isinstance(want, float) or isinstance(got, float):
        return isinstance(got, (int, float)) and math.isclose(got, want, rel_tol=1e-5, abs_tol=1e-5)
    return got == want


def python_signature(code: str) -> tuple[str, tuple[str, ...], tuple[str, ...], str]:
    """(method, parameter names, their annotations, return annotation) of ``class Solution``'s one public method."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise UnsupportedError("no Python signature", f"does not parse: {exc}") from exc
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Solution"]
    if not classes:
        raise UnsupportedError("design problem", "no class Solution")
    methods = [
        n
        for n in classes[0].body
        if isinstance(n, ast.FunctionDef)
        and not n.name.startswith("_")
        and n.args.args
        and n.args.args[0].arg == "self"
    ]
    if len(methods) != 1:
        raise UnsupportedError("no Python signature", f"{len(methods)} public methods")
    method = methods[0]
    params = method.args.args[1:]
    if method.args.vararg or method.args.kwarg or method.args.kwonlyargs:
        raise UnsupportedError("unsupported signature")
    annotations = tuple(ast.unparse(p.annotation) if p.annotation else "" for p in params)
    returns = ast.unparse(method.returns) if method.returns else ""
    for annotation in (*annotations, returns):
        if not annotation:
            raise UnsupportedError("no Python signature", "a parameter or the return has no annotation")
        names = {n.id for n in ast.walk(ast.parse(annotation, mode="eval")) if isinstance(n, ast.Name)}
        if names - TYPES:
            raise UnsupportedError("unsupported type", ", ".join(sorted(names - TYPES)))
    return method.name, tuple(p.arg for p in params), annotations, returns


def _inputs(text: str) -> list[tuple[str | None, Any]]:
    """``a = [1,2], b = "x"`` -> [("a", [1, 2]), ("b", "x")]; a bare value -> [(None, value)]."""
    text = text.strip()
    if not re.match(r"[A-Za-z_]\w*\s*=", text):
        return [(None, _value(text, whole=True))]
    out, at = [], 0
    while at < len(text):
        name = re.compile(r"\s*,?\s*([A-Za-z_]\w*)\s*=\s*").match(text, at)
        if name is None:
            raise UnsupportedError("examples unparsable", f"input {text[:80]!r}")
        value, at = _decode(text, name.end())
        out.append((name.group(1), value))
    return out


def _value(text: str, whole: bool) -> Any:
    """The JSON value at the start of ``text``; with ``whole``, only commentary may follow it, on later lines."""
    value, end = _decode(text.strip(), 0)
    rest = text.strip()[end:]
    if whole and rest.strip() and not rest.startswith("\n"):
        raise UnsupportedError("examples unparsable", f"output {text.strip()[:80]!r}")
    return value


def _decode(text: str, at: int) -> tuple[Any, int]:
    try:
        return json.JSONDecoder().raw_decode(text, at)
    except ValueError as exc:
        raise UnsupportedError("examples unparsable", f"value at {text[at : at + 40]!r}") from exc
