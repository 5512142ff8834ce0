"""Neural networks as text, and what they cost.

Modules (import each one directly; the optional dependencies ``onnx``, ``onnxscript`` and
``onnxruntime`` load only with the modules that need them, never with this package):

- ``coderlm.collect.nets.nb201``: NAS-Bench-201 cell strings and the network builder (PyTorch only).
- ``coderlm.collect.nets.nb201_onnx``: the same NAS-Bench-201 networks built directly as ONNX, in
  milliseconds: the proto ``onnx_export`` gives, but for the weight values (the collector uses it).
- ``coderlm.collect.nets.onnx_export``: ``nn.Module`` -> ``onnx.ModelProto``; reading ``.onnx`` files.
- ``coderlm.collect.nets.onnx_text``: ``onnx.ModelProto`` -> compact, canonical text (docs/onnx_text.md).
- ``coderlm.collect.nets.onnx_cost``: exact multiply-accumulates and parameters from the ONNX graph.
- ``coderlm.collect.nets.latency``: CPU latency with onnxruntime.
- ``coderlm.collect.nets.collect``: the resumable NAS-Bench-201 collector (``coderlm collect nas``).
"""

# How a graph is written as text (docs/onnx_text.md); here, so choosing one needs no onnx.
TEXT_STYLES = ("compact", "minimal", "onnx")
