"""Collect neural networks as text and measure them.

Modules (import each one directly; the heavy optional dependencies ``onnx``,
``onnxruntime`` and ``onnxscript`` load only inside the modules that need them):

- ``coderlm.collect.nas``: NAS-Bench-201 cell strings and the network builder (PyTorch only).
- ``coderlm.collect.onnx_export``: ``nn.Module`` -> ``onnx.ModelProto``; reading ``.onnx`` files.
- ``coderlm.collect.onnx_text``: ``onnx.ModelProto`` -> compact, canonical text (docs/onnx_text.md).
- ``coderlm.collect.onnx_cost``: exact multiply-accumulates and parameters from the ONNX graph.
- ``coderlm.collect.latency``: CPU latency with onnxruntime.
"""
