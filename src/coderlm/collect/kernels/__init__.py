"""Kernels that PyTorch's compiler generates, and what they cost (docs/kernels.md).

Modules (import each one directly):

- ``coderlm.collect.kernels.programs``: KernelBench's programs, their size constants scaled down.
- ``coderlm.collect.kernels.synthetic``: a seeded generator of short PyTorch programs.
- ``coderlm.collect.kernels.inductor``: the worker process: compile with TorchInductor, capture each
  generated kernel's source, time it alone (run as ``python -m coderlm.collect.kernels.inductor``).
- ``coderlm.collect.kernels.worker``: drives a worker process with a timeout per program.
- ``coderlm.collect.kernels.collect``: the resumable collector (``coderlm collect kernels``).
"""
