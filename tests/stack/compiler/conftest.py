"""Small ONNX graphs for the compiler tests, imported through the real adapter (fixture ``mk``)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from stack.adapter import import_model
from stack.compiler import Graph


def onnx_model(nodes, inputs, outputs, inits=None, opset: int = 17) -> onnx.ModelProto:
    """A model from (name, shape) inputs/outputs (float32) and {name: array} initializers."""
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs]
    init = [numpy_helper.from_array(np.asarray(a), n) for n, a in (inits or {}).items()]
    graph = helper.make_graph(nodes, "test", ins, outs, init)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def graph_of(nodes, inputs, outputs, inits=None, opset: int = 17) -> Graph:
    return import_model(onnx_model(nodes, inputs, outputs, inits, opset))


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


class Builders:
    """Graph builders handed to tests through the ``mk`` fixture."""

    onnx_model = staticmethod(onnx_model)
    graph_of = staticmethod(graph_of)
    rand = staticmethod(rand)


@pytest.fixture()
def mk() -> Builders:
    return Builders()
