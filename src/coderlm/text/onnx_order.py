"""Another valid order of an ONNX text's nodes: the same network written differently, the same labels.

``coderlm.collect.nets.onnx_text`` writes a graph's nodes in one canonical order: depth-first post-order
from the graph outputs, each node's inputs visited in position order, tensors named ``t0, t1, ...`` and
weights ``w0, w1, ...`` (shape at first use) in the order written. Visiting each node's inputs in a
random order instead gives another topological order of the same graph: independent branches swap
places and every ``t`` and ``w`` number changes, while each line's operator, attributes, shapes and
connections stay what they were. A model trained on a few hundred networks can memorise their canonical
numbering; copies in other orders ask it to read the graph (the SMILES-enumeration idea for molecules).

``reordered(text, rng)`` writes such a copy; with ``rng=None`` it visits inputs in position order, which
gives back a canonical text unchanged (the tests check this, and that reordering a copy canonically
gives back the original). Text that is not in the compact or minimal style, or that the parser does not
understand, gets ``None``: nothing is guessed.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

HEADER = re.compile(r"onnx opset=\d+ dtype=\w+")
TENSOR = re.compile(r"\b[txy]\d+\b")  # node outputs t.., graph inputs x.., graph outputs y..
WEIGHT = re.compile(r"\bw(\d+)((?:[a-z]+\d*)?\[[^\]]*\])?")  # a numbered weight, its dtype and shape at first use
OPENS, CLOSES = "([{", ")]}"


@dataclass
class Node:
    outputs: list[str]  # as written: t.., y.. or _
    call: str  # "Op[attrs]" before the argument list
    args: str  # the argument list's text, without its parentheses
    comment: str  # "  # [shapes]" or ""
    uses: list[str]  # tensors read, in position order (weights and literals left out)


def split_call(rest: str) -> tuple[str, str] | None:
    """``"Op[attrs](args)"`` -> ``("Op[attrs]", "args")``: the last top-level parenthesis group."""
    if not rest.endswith(")"):
        return None
    depth = 0
    for i in range(len(rest) - 1, -1, -1):
        char = rest[i]
        if char in CLOSES:
            depth += 1
        elif char in OPENS:
            depth -= 1
            if depth == 0:
                return (rest[:i], rest[i + 1 : -1]) if char == "(" and i else None
    return None


def parse_node(line: str) -> Node | None:
    lhs, sep, rest = line.partition(" = ")
    if not sep:
        return None
    rest, _, comment = rest.partition("  # ")
    parts = split_call(rest)
    outputs = lhs.split(", ")
    if parts is None or not all(o == "_" or TENSOR.fullmatch(o) for o in outputs):
        return None
    return Node(outputs, parts[0], parts[1], f"  # {comment}" if comment else "", TENSOR.findall(parts[1]))


def reordered(text: str, rng: random.Random | None) -> str | None:
    """``text`` (an ONNX text, see the module docstring) with its nodes in another valid order and its
    tensors and weights renumbered in that order; ``rng=None``: inputs in position order. None when the
    text is not one this module can rewrite."""
    lines = text.split("\n")
    trailing = lines[-1] == ""
    lines = lines[:-1] if trailing else lines
    if not lines or not HEADER.fullmatch(lines[0]):
        return None
    head = [lines[0]]
    i = 1
    while i < len(lines) and lines[i].startswith(("input ", "output ")):
        head.append(lines[i])
        i += 1
    tail = [line for line in lines[i:] if line.startswith("unused ")]
    body = lines[i : len(lines) - len(tail)]
    nodes = [parse_node(line) for line in body]
    if not body or any(n is None for n in nodes) or any(WEIGHT.search(line) for line in head):
        return None
    producer: dict[str, int] = {}
    for index, node in enumerate(nodes):
        for name in node.outputs:
            if name != "_" and producer.setdefault(name, index) != index:
                return None  # a tensor written twice
    if any(name[0] == "t" and name not in producer for node in nodes for name in node.uses):
        return None  # a tensor read but never written
    order = _post_order(nodes, producer, head, rng)
    if order is None:
        return None
    return _renamed([nodes[k] for k in order], head, tail) + ("\n" if trailing else "")


def _post_order(nodes: list[Node], producer: dict[str, int], head: list[str], rng) -> list[int] | None:
    """Depth-first post-order from the graph outputs (then any node not reached, in text order), each
    node's producers visited in position order or, with ``rng``, in a random one; None on a cycle."""
    outputs = [line.split()[1] for line in head if line.startswith("output ")]
    roots = [producer[name] for name in outputs if name in producer] + list(range(len(nodes)))
    order: list[int] = []
    state: dict[int, int] = {}  # 1 = on the path, 2 = written
    for root in roots:
        if root in state:
            continue
        stack = [(root, iter(_producers(nodes[root], producer, rng)))]
        state[root] = 1
        while stack:
            index, pending = stack[-1]
            child = next((c for c in pending if state.get(c) != 2), None)
            if child is None:
                stack.pop()
                state[index] = 2
                order.append(index)
            elif state.get(child) == 1:
                return None
            else:
                state[child] = 1
                stack.append((child, iter(_producers(nodes[child], producer, rng))))
    return order


def _producers(node: Node, producer: dict[str, int], rng) -> list[int]:
    found = list(dict.fromkeys(producer[name] for name in node.uses if name in producer))
    if rng is not None:
        rng.shuffle(found)
    return found


def _renamed(nodes: list[Node], head: list[str], tail: list[str]) -> str:
    """The lines of ``nodes`` in their new order, ``t`` and ``w`` numbered in it (weights' shapes at first use)."""
    names: dict[str, str] = {}
    shapes: dict[str, str] = {}  # old weight number -> its dtype and shape, from wherever it carries them
    for line in [node.args for node in nodes] + tail:
        for match in WEIGHT.finditer(line):
            if match.group(2):
                shapes.setdefault(match.group(1), match.group(2))
    weights: dict[str, str] = {}

    def weight(match: re.Match) -> str:
        old = match.group(1)
        if old in weights:
            return weights[old]
        weights[old] = f"w{len(weights)}"
        return weights[old] + shapes.get(old, "")

    def tensor(match: re.Match) -> str:
        return names.get(match.group(0), match.group(0))

    out = list(head)
    count = 0
    for node in nodes:
        args = WEIGHT.sub(weight, TENSOR.sub(tensor, node.args))
        for name in node.outputs:
            if name.startswith("t"):
                names[name] = f"t{count}"
                count += 1
        lhs = ", ".join(names.get(o, o) for o in node.outputs)
        out.append(f"{lhs} = {node.call}({args}){node.comment}")
    out += [WEIGHT.sub(weight, line) for line in tail]
    return "\n".join(out)
