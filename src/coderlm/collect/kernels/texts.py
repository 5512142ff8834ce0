"""What a model reads of a generated kernel: its name, a summary of its loops, its simplified source.

``kernel_text`` (one kernel) and ``graph_text`` (a whole generated module) write the texts of the kernel
collector's rows (``TEXT_REVISION`` 2; 1 was the raw source without summary, ``collect.rewrite_texts``
turns it into 2).

A kernel's latency is mostly its iteration count times the cost of one iteration, and the iteration
count is in the text only as literal loop bounds spread over the source (``x0<static_cast<int64_t>
(4096L)``). A model reading tokens cannot multiply them; a summary line can state the product:

    // loops: 1216 iterations (18x1x64x1=1152, 32x1x2=64)

``simplify`` first writes Inductor's integer casts and ``L`` suffixes as plain numbers
(``static_cast<int64_t>(4096L)`` -> ``4096``, ``2048L*x0`` -> ``2048*x0``): the same program, about a fifth
shorter, its numbers readable digit by digit.

C++ (Inductor on CPU): every ``for`` header with a literal start and bound; a loop's trip count is
``ceil((bound - start) / step)`` (a vectorized loop steps 16 lanes at a time), nesting follows the
braces, and each innermost loop adds the product of the trip counts on its path. A bound that is not a
literal (a symbolic size) counts as 1 and is marked ``?``. Triton (Inductor on CUDA): the product of the
kernel's ``xnumel``, ``ynumel`` and ``r*numel`` literals.
"""

from __future__ import annotations

import math
import re

TEXT_REVISION = 2  # 1: raw casts (static_cast<int64_t>(16L)), no loop summary
# "name = async_compile.cpp_pybinding([...], r'''<source>''')" in the generated module
CPP_KERNEL = re.compile(r"^(cpp_\w+) = async_compile\.cpp_pybinding\(\[.*?\], r'''(.*?)'''\)", re.M | re.S)
TRITON_KERNEL = re.compile(
    r"^(triton_\w+) = async_compile\.triton\('\w+', '''(.*?)''', device_str='cuda'\)", re.M | re.S
)
BOILERPLATE = ("#include <torch/csrc/inductor/cpp_prefix.h>", "inductor_cpu_integer_div_error")
CAST = re.compile(r"static_cast<(?:int64_t|long)>\((-?\d+)L?\)")
LONG = re.compile(r"\b(\d+)L\b")
FOR = re.compile(
    r"for\s*\(\s*(?:int64_t|long|int|auto)\s+\w+\s*=\s*(-?\d+)\s*;\s*\w+\s*<\s*([^;]+?)\s*;"
    r"\s*\w+\s*(?:\+=\s*(\d+)|\+\+)\s*\)"
)
NUMEL = re.compile(r"^\s*([xyz]|r\d*_?)numel\s*=\s*(\d+)\s*$", re.M)
SHOWN = 6  # loop paths listed in the summary line (the total counts all)


def simplify(source: str) -> str:
    """Inductor's integer casts and ``L`` suffixes as plain numbers."""
    return LONG.sub(r"\1", CAST.sub(r"\1", source))


def loop_paths(source: str) -> list[list[int | None]]:
    """Trip counts on the path to each innermost C++ loop, outermost first (None: a bound not a literal)."""
    paths: list[list[int | None]] = []
    stack: list[list] = []  # [brace depth where the loop starts, trip count, has an inner loop]
    depth = 0

    def close() -> None:
        _, trips, inner = stack.pop()
        if not inner:
            paths.append([entry[1] for entry in stack] + [trips])

    for line in simplify(source).split("\n"):
        match = FOR.search(line)
        if match:
            while stack and stack[-1][0] >= depth:
                close()
            if stack:
                stack[-1][2] = True
            start, bound, step = int(match.group(1)), match.group(2), int(match.group(3) or 1)
            trips = math.ceil((int(bound) - start) / max(step, 1)) if bound.isdigit() else None
            stack.append([depth, None if trips is None else max(trips, 0), False])
        depth += line.count("{") - line.count("}")
        while stack and stack[-1][0] > depth:
            close()
    while stack:
        close()
    return paths


def iterations(source: str) -> int:
    """Innermost iterations of the kernel (C++ loop nests or Triton numels), at least 1."""
    numels = _triton_numels(source)
    return max(math.prod(int(n) for _, n in numels), 1) if numels else _total(loop_paths(source))


def summary(source: str) -> str:
    """The summary line (``// loops: ...``) of a kernel's source, or ``""`` if it has no loop."""
    numels = _triton_numels(source)
    if numels:
        parts = ", ".join(f"{axis}numel={n}" for axis, n in numels)
        return f"// loops: {iterations(source)} iterations ({parts})"
    paths = loop_paths(source)
    if not paths:
        return ""
    shown = [
        "x".join("?" if t is None else str(t) for t in path) + f"={math.prod(t or 1 for t in path)}"
        for path in paths[:SHOWN]
    ]
    more = f", +{len(paths) - SHOWN} more" if len(paths) > SHOWN else ""
    return f"// loops: {_total(paths)} iterations ({', '.join(shown)}{more})"


def _triton_numels(source: str) -> list[tuple[str, str]]:
    """(axis, numel) literals of a Triton kernel; empty for C++ (any ``for`` loop)."""
    return [] if FOR.search(simplify(source)) else NUMEL.findall(source)


def _total(paths: list[list[int | None]]) -> int:
    """Iterations summed over the innermost loops' paths (a symbolic bound counts 1), at least 1."""
    return max(sum(math.prod(t or 1 for t in path) for path in paths), 1)


def kernel_text(name: str, source: str) -> str:
    """What a model reads: the kernel's name (it lists the fused ops), its loop summary (``summary``)
    and its source with Inductor's integer casts written as plain numbers, boilerplate lines dropped."""
    lines = [line for line in source.strip("\n").splitlines() if not any(b in line for b in BOILERPLATE)]
    return annotated(f"// {name}", "\n".join(lines).strip("\n") + "\n")


def graph_text(code: str, device: str = "cpu") -> str:
    """The generated module as a model reads it: kernels and the wrapper that calls them, without the import
    preamble and the benchmark harness at the end (the same in every module); casts simplified and the loop
    summary of all its kernels first."""
    starts = [m.start() for m in (TRITON_KERNEL if device == "cuda" else CPP_KERNEL).finditer(code)]
    starts += [i + 1 for i in (code.find("\nclass Runner"), code.find("\ndef call(")) if i >= 0]
    start = min(starts, default=0)
    end = code.find("\ndef get_args():")
    return annotated("", code[start : end if end >= 0 else len(code)].strip("\n") + "\n")


def annotated(header: str, source: str) -> str:
    """``header`` (if any), the loop summary (if any loop) and the simplified ``source``, one per line."""
    body = simplify(source)
    return "".join(f"{line}\n" for line in (header, summary(body)) if line) + body


def as_kernel_text(text: str) -> str:
    """A C++ kernel as the collector writes it: ``text`` itself if it already is (its loop summary follows
    the name line), else annotated: a leading ``// <name>`` line kept first, casts simplified, the summary
    added (a kernel copied from Inductor's cache, or a dataset row of text revision 1)."""
    lines = text.split("\n", 2)
    if len(lines) > 1 and (lines[0].startswith("// loops: ") or lines[1].startswith("// loops: ")):
        return text
    if lines[0].startswith("// ") and not FOR.search(lines[0]):
        head, _, body = text.partition("\n")
        return annotated(head, body)
    return annotated("", text)
