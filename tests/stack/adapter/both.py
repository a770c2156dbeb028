"""Models run through onnxruntime and through the whole stack, for the adapter tests that
compare the two: one-input ones (``x`` → ``y``: :func:`reference`, :func:`ours`), and any
named inputs (:func:`both`); :func:`scatter_model` builds the scatter ops' models."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

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


def both(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``y`` from onnxruntime and from the stack, for the named inputs ``feeds``."""
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (ref,) = sess.run(None, feeds)
    compiled = CompiledModel(import_model(model), runtime=shared_runtime())
    try:
        got = compiled.run(feeds)["y"]
    finally:
        compiled.close()
    return np.asarray(ref), got


ELEMENT = {
    np.float32: TensorProto.FLOAT,
    np.float16: TensorProto.FLOAT16,
    np.int32: TensorProto.INT32,
    np.int64: TensorProto.INT64,
    np.bool_: TensorProto.BOOL,
}


def scatter_model(
    op: str,
    data: np.ndarray,
    indices: np.ndarray,
    updates: np.ndarray,
    opset: int = 18,
    consts: tuple[str, ...] = (),
    **attrs: Any,
) -> onnx.ModelProto:
    """One ``op`` node (ScatterND, ScatterElements) of inputs ``x``, ``i``, ``u`` → ``y``; the
    inputs named in ``consts`` are initializers instead of graph inputs."""
    arrays = {"x": data, "i": indices, "u": updates}
    node = helper.make_node(op, ["x", "i", "u"], ["y"], name="n0", **attrs)
    inputs = [
        helper.make_tensor_value_info(n, ELEMENT[a.dtype.type], a.shape)
        for n, a in arrays.items()
        if n not in consts
    ]
    graph = helper.make_graph(
        [node],
        "g",
        inputs,
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(arrays[n], n) for n in consts],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
