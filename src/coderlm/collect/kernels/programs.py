"""PyTorch programs to compile: KernelBench's files with their sizes scaled down, and generated ones.

A program is Python source in KernelBench's convention: ``class Model(nn.Module)``,
``get_inputs()`` and ``get_init_inputs()``, sizes fixed in the text. ``KernelProgram`` carries
it with an id (the dataset group: one program, every size) and a draw id (one size).

KernelBench sizes are for large GPUs, so ``scaled_draws`` rewrites the module-level size
constants: each draw picks a total number of input elements, log-uniform in ``elements``
(default 1e4..4e6), and multiplies every size-like integer constant by one factor, found by
bisection so that ``get_inputs()`` (built on the meta device: nothing allocated) holds about that
many elements. Size-like: an integer literal >= 16 (or an integer expression such as ``2048 * 2``;
tuples of them too) whose name is not a kernel size, stride, padding, dilation, group, head or
layer count. Multiples of 8 stay multiples of 8. Draws that give the same sizes are dropped.
"""

from __future__ import annotations

import ast
import dataclasses
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import torch

LEVELS = ("level1", "level2", "level3")
# names of integer constants that are not sizes: scaling them would change the operator, not its size
NOT_SIZES = re.compile(r"kernel|stride|pad|dil|group|head|layer|patch|window|expansion|ratio|factor|axis", re.I)
SMALLEST_SIZE = 16  # integer constants below this are left as they are (channels of an image, a dim index)


@dataclasses.dataclass(frozen=True)
class KernelProgram:
    program: str  # the group: "kernelbench/level2/12_Gemm_Multiply_LeakyReLU" or "synthetic/000042"
    draw: int  # which size of it
    source: str  # Python source defining Model, get_inputs, get_init_inputs
    level: str  # "level1".."level3", or "synthetic"
    dtype: str = "float32"  # inputs are cast to this floating dtype ("bfloat16" too)
    skip: str = ""  # why it is not run (sizes that cannot be scaled down), or ""

    @property
    def key(self) -> str:
        """Unique in a dataset: the program and its draw."""
        return f"{self.program}#{self.draw}"


def kernelbench_files(root: str | Path, levels: Sequence[str] = LEVELS) -> list[Path]:
    """The program files of ``root/level*/``, sorted by level and number."""
    root = Path(root)
    files = []
    for level in levels:
        folder = root / level
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder}: not found (KernelBench's level folders; pass data)")
        files += sorted(folder.glob("*.py"), key=lambda p: (int(p.name.split("_", 1)[0]), p.name))
    return files


def size_constants(source: str) -> dict[str, int | tuple[int, ...]]:
    """Module-level integer constants of ``source`` (literals, constant expressions, tuples of them;
    ``a = b = 3`` and ``a, b = 3, 4`` too)."""
    found: dict[str, int | tuple[int, ...]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                found |= _assigned(target, node.value)
    return found


def _assigned(target: ast.expr, value: ast.expr) -> dict[str, int | tuple[int, ...]]:
    if isinstance(target, ast.Name):
        number = _constant_int(value)
        if number is not None:
            return {target.id: number}
        if isinstance(value, ast.Tuple):
            items = [_constant_int(item) for item in value.elts]
            if items and all(item is not None for item in items):
                return {target.id: tuple(items)}
        return {}
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        found = {}
        for name, item in zip(target.elts, value.elts, strict=True):
            found |= _assigned(name, item)
        return found
    return {}


def with_constants(source: str, values: dict[str, int | tuple[int, ...]]) -> str:
    """``source`` with the module-level assignments of ``values``' names rewritten to those values, one
    line per name (statements sharing a line, ``a = 1; b = c = 2``, are rewritten together)."""
    lines = source.splitlines(keepends=True)
    by_line: dict[tuple[int, int], list[ast.stmt]] = {}
    for node in ast.parse(source).body:
        span, group = (node.lineno, node.end_lineno), [node]
        for other in list(by_line):
            if other[0] <= span[1] and span[0] <= other[1]:  # shares a line with an earlier statement
                span = (min(span[0], other[0]), max(span[1], other[1]))
                group = by_line.pop(other) + group
        by_line[span] = group
    replacements = []
    for (start, end), nodes in by_line.items():
        texts, changed = [], False
        for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
            text = _rewritten(node, values)
            changed |= text is not None
            texts.append(text if text is not None else ast.unparse(node) + "\n")
        if changed:
            replacements.append((start, end, "".join(texts)))
    for start, end, text in sorted(replacements, reverse=True):
        lines[start - 1 : end] = [text]
    return "".join(lines)


def _rewritten(node: ast.stmt, values: dict[str, int | tuple[int, ...]]) -> str | None:
    """An assignment of constants with some name in ``values``, as new lines; None to keep it as it is."""
    if not isinstance(node, ast.Assign):
        return None
    current: dict[str, int | tuple[int, ...]] = {}
    for target in node.targets:
        current |= _assigned(target, node.value)
    names = [n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name)]
    if not set(current) & set(values) or set(names) != set(current):
        return None  # nothing to change, or some target is not a plain constant
    return "".join(f"{name} = {values.get(name, current[name])!r}\n" for name in dict.fromkeys(names))


def input_elements(source: str) -> int:
    """Total elements of ``get_inputs()``'s tensors, built on the meta device (nothing allocated)."""
    namespace: dict = {"__name__": "coderlm_kernel_program"}
    exec(compile(source, "<program>", "exec"), namespace)
    with torch.device("meta"):
        inputs = namespace["get_inputs"]()
    return sum(int(x.numel()) for x in inputs if isinstance(x, torch.Tensor))


def scaled_source(source: str, elements: int) -> str:
    """``source`` with its size constants scaled by one factor (<= 1) so its inputs hold about ``elements``."""
    sizes = {name: value for name, value in size_constants(source).items() if not NOT_SIZES.search(name)}
    if not sizes or input_elements(source) <= elements:
        return source
    low, high = -12.0, 0.0  # log2 of the factor
    best = with_constants(source, {k: _scale(v, 2.0**low) for k, v in sizes.items()})  # as small as it gets
    for _ in range(24):
        middle = (low + high) / 2
        candidate = with_constants(source, {k: _scale(v, 2.0**middle) for k, v in sizes.items()})
        if input_elements(candidate) > elements:
            high = middle
        else:
            low, best = middle, candidate
    return best


def scaled_draws(
    path: Path, draws: int, seed: int = 0, elements: tuple[float, float] = (1e4, 4e6)
) -> Iterator[KernelProgram]:
    """Up to ``draws`` distinct sizes of one KernelBench file. A draw whose inputs cannot be brought
    under 4x the largest size (sizes it cannot scale) carries a ``skip`` reason instead of running."""
    source = path.read_text()
    level = path.parent.name
    program = f"kernelbench/{level}/{path.stem}"
    rng = np.random.default_rng([seed, *map(ord, program)])
    seen = set()
    for draw in range(draws):
        target = int(math.exp(rng.uniform(math.log(elements[0]), math.log(elements[1]))))
        skip = ""
        try:
            text = scaled_source(source, target)
            held = input_elements(text)
            if held > 4 * elements[1]:
                skip = f"inputs hold {held:,} elements after scaling (limit {4 * elements[1]:,.0f})"
        except Exception as exc:  # the program cannot even build its inputs on the meta device
            text, skip = source, f"sizes not read: {type(exc).__name__}: {exc}"[:300]
        if text in seen:
            continue
        seen.add(text)
        yield KernelProgram(program, draw, text, level, skip=skip)


def _constant_int(node: ast.expr) -> int | None:
    """The value of an integer constant expression (``4096``, ``2048 * 2``, ``-1``), else None."""
    allowed = (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop)
    if not all(isinstance(sub, allowed) for sub in ast.walk(node)):
        return None
    try:
        value = eval(compile(ast.Expression(node), "<constant>", "eval"), {"__builtins__": {}})
    except Exception:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _scale(value: int | tuple[int, ...], factor: float) -> int | tuple[int, ...]:
    if isinstance(value, tuple):
        return tuple(_scale(v, factor) for v in value)
    if value < SMALLEST_SIZE:
        return value
    if value % 8 == 0:
        return max(8, 8 * round(value * factor / 8))
    return max(1, round(value * factor))
