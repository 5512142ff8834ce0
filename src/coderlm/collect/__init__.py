"""Collect code with its measured cost: one subpackage per family of code.

- ``coderlm.collect.nets``: neural networks as text (NAS-Bench-201 cells -> PyTorch -> ONNX ->
  canonical text), labelled with exact FLOPs and parameters from the graph and CPU latency.
- ``coderlm.collect.programs``: programs run in a sandbox (MBXP, MathQA-Python, HumanEval, in any
  language a runner table describes), labelled with peak memory and runtime.

A third family, ``coderlm.collect.kernels``, will come. Nothing is re-exported here: import each
module directly, so an optional dependency loads only where it is used.
"""
