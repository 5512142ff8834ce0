"""Programs run in a sandbox, and what they cost (docs/programs.md).

Modules (import each one directly):

- ``coderlm.collect.programs.sandbox``: runs one untrusted process: private folder, limits, no
  network, clean kill, peak RSS (with ``rss_exec.c``, built on first use).
- ``coderlm.collect.programs.python_profiler``: the paper's Python protocol: heap peak of the tests
  (tracemalloc) and in-process runtime.
- ``coderlm.collect.programs.runners``: any other language, described by data (``runners.toml``):
  compile once, run, measure.
- ``coderlm.collect.programs.corpora``: MBXP, MathQA-Python, HumanEval, TheAlgorithms -> runnable programs.
- ``coderlm.collect.programs.leetcode`` (with ``leetcode_sdk``, ``leetcode_examples``): LeetCode statements,
  solutions and test cases -> harness jobs, and what was left out with its reason.
- ``coderlm.collect.programs.harness`` (templates in ``harness/``, helpers in ``support``): a solution and
  its cases -> a program in its language; compile, exact memory labels, check, in-process time.
- ``coderlm.collect.programs.collect``: the parallel, resumable collector (``coderlm collect programs``).
"""
