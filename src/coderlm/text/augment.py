"""Rewrites of a program that keep its behaviour: more training texts with the same labels.

A model trained on a thousand programs memorises their identifiers and layout within a few dozen
epochs; a rewrite that changes what a program looks like but not what it does (so not its memory or
runtime) asks it to read what the code does. ``python_variant`` rewrites Python source three ways,
each chosen at random per copy:

* **local names renamed**: every name bound inside a function (positional parameters without a default,
  ``*args`` / ``**kwargs``, assigned and loop variables, comprehension targets, ``except ... as`` names) is
  mapped, consistently, to another name that does not occur in the text. What callers can see keeps its
  name: function and class names (the doctests call them), parameters with defaults and keyword-only
  ones, names bound at module or class level; so do imported and ``global`` names, builtins, names also
  used as keyword arguments or attributes, and names inside f-strings;
* **comments dropped** (the ``#`` comments; docstrings, which hold the problem statement, stay);
* **indentation re-spelled**: each block level as a tab, 2 or 4 spaces (continuation lines and strings
  untouched).

Text that does not parse as Python gets no variant (``None``): nothing is guessed. ONNX texts
(``coderlm.collect.nets.onnx_text``) are rewritten by ``coderlm.text.onnx_order`` instead: the same
graph with its nodes in another valid order and renumbered.
"""

from __future__ import annotations

import ast
import builtins
import io
import keyword
import random
import tokenize

from coderlm.text.onnx_order import HEADER, reordered

NAME_POOL = (
    *"abcdefghkmnpqrstuvwxyzij",
    "arr", "lst", "res", "val", "tmp", "cur", "out", "acc", "data", "item", "num", "idx", "key", "seq", "cnt",
    "total", "prev", "node", "left", "right",
)  # fmt: skip
INDENTS = ("\t", "  ", "    ")
KEPT = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"self", "cls", "_", "__class__"}


def renamable(tree: ast.AST) -> set[str]:
    """Names bound inside functions that can be renamed everywhere they occur without changing what the
    program does for its callers (see the module docstring)."""
    bound, fixed = set(), set()

    def visit(node: ast.AST, local: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            positional = args.posonlyargs + args.args
            defaulted = positional[len(positional) - len(args.defaults) :]
            # a caller may pass parameters with defaults, and keyword-only ones, by name
            fixed.update(a.arg for a in defaulted + args.kwonlyargs)
            bound.update(a.arg for a in positional[: len(positional) - len(args.defaults)])
            bound.update(a.arg for a in (args.vararg, args.kwarg) if a)
            if not isinstance(node, ast.Lambda):
                fixed.add(node.name)
            local = True
        elif isinstance(node, ast.ClassDef):
            fixed.add(node.name)
            local = False
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            (bound if local else fixed).add(node.id)  # module and class names are the program's interface
        elif isinstance(node, ast.ExceptHandler) and node.name:
            (bound if local else fixed).add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            fixed.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            fixed.update(node.names)
        elif isinstance(node, ast.keyword) and node.arg:
            fixed.add(node.arg)
        elif isinstance(node, ast.Attribute):
            fixed.add(node.attr)
        elif isinstance(node, ast.JoinedStr):
            fixed.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
        for child in ast.iter_child_nodes(node):
            visit(child, local)

    visit(tree, False)
    return bound - fixed - KEPT


def fresh_names(count: int, taken: set[str], rng: random.Random) -> list[str]:
    """``count`` distinct names, none in ``taken``: the pool's first, shuffled, then ``v0``, ``v1``, ..."""
    pool = [name for name in NAME_POOL if name not in taken]
    rng.shuffle(pool)
    extra = (f"v{i}" for i in range(10**9) if f"v{i}" not in taken)
    return [pool[i] if i < len(pool) else next(extra) for i in range(count)]


def python_variant(text: str, rng: random.Random) -> str | None:
    """A rewrite of Python source ``text`` with the same behaviour (see the module docstring), or None
    when ``text`` does not parse (or tokenize) as Python."""
    try:
        tree = ast.parse(text)
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (SyntaxError, ValueError, tokenize.TokenError):
        return None
    names = sorted(renamable(tree))
    taken = {t.string for t in tokens if t.type == tokenize.NAME}
    mapping = dict(zip(names, fresh_names(len(names), taken, rng), strict=True)) if rng.random() < 0.8 else {}
    drop_comments = rng.random() < 0.5
    indent = rng.choice(INDENTS)
    lines = io.StringIO(text).readlines()  # the lines tokenize numbered
    edits: dict[int, list[tuple[int, int, str]]] = {}  # line index -> (start col, end col, replacement)
    depth, previous, line_start = 0, None, True
    for token in tokens:
        row, col = token.start
        kind = token.type
        if kind == tokenize.INDENT:
            depth += 1
        elif kind == tokenize.DEDENT:
            depth -= 1
        elif kind == tokenize.NEWLINE:
            line_start = True
        elif kind == tokenize.COMMENT:
            if drop_comments:
                edits.setdefault(row - 1, []).append((col, token.end[1], ""))
        elif kind not in (tokenize.NL, tokenize.ENDMARKER):
            if line_start and depth and col:  # a logical line's first token: its indentation
                edits.setdefault(row - 1, []).append((0, col, indent * depth))
            line_start = False
            if kind == tokenize.NAME and token.string in mapping and not (previous and previous.string == "."):
                edits.setdefault(row - 1, []).append((col, token.end[1], mapping[token.string]))
            previous = token
    for index, changes in edits.items():
        line = lines[index]
        for start, end, new in sorted(changes, reverse=True):
            line = line[:start] + new + line[end:]
        if drop_comments and not line.strip() and lines[index].strip():
            line = "\n" if lines[index].endswith("\n") else ""
        lines[index] = line
    return "".join(lines)


def variants(text: str, copies: int, seed: int) -> list[str]:
    """Up to ``copies`` distinct rewrites of ``text`` other than itself: Python source rewritten
    (``python_variant``), an ONNX text reordered (``coderlm.text.onnx_order``); none for other text."""
    rng = random.Random(seed)
    rewrite = reordered if HEADER.match(text) else python_variant
    out: list[str] = []
    for _ in range(copies * 3):
        if len(out) == copies:
            break
        variant = rewrite(text, rng)
        if variant is None:
            break
        if variant != text and variant not in out:
            out.append(variant)
    return out
