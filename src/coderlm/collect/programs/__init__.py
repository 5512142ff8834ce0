"""Programs run in a sandbox, and what they cost (docs/programs.md).

Modules (import each one directly):

- ``coderlm.collect.programs.sandbox``: runs one untrusted process: private folder, limits, no
  network, clean kill, peak RSS (with ``rss_exec.c``, built on first use).
- ``coderlm.collect.programs.python_profiler``: the paper's Python protocol: heap peak of the tests
  (tracemalloc) and in-process runtime.
- ``coderlm.collect.programs.runners``: any other language, described by data (``runners.toml``):
  compile once, run, measure.
- ``coderlm.collect.programs.corpora``: MBXP, MathQA-Python, HumanEval -> runnable programs.
- ``coderlm.collect.programs.collect``: the parallel, resumable collector (``coderlm collect programs``).
"""
