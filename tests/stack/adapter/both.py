"""One-input, one-output models (``x`` → ``y``) run through onnxruntime and through the whole
stack, for the adapter tests that compare the two."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort

from stack.adapter import import_model
from stack.compiler import CompiledModel
from stack.compiler.jit import shared_runtime


def reference(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    """``y`` as onnxruntime computes it on the CPU."""
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"x": x})
    return np.asarray(y)


def ours(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    """``y`` as the stack computes it: imported, compiled, run on the shared runtime."""
    compiled = CompiledModel(import_model(model), runtime=shared_runtime())
    try:
        return compiled.run({"x": x})["y"]
    finally:
        compiled.close()
