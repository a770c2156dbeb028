"""Whole test models built in code with ``onnx.helper`` (random weights, fixed seeds).

``cnn`` — a ResNet-style CNN (stem conv+BN+ReLU, max-pool, an identity residual block, a
downsampling residual block with a 1x1 projection, global average pool, classifier);
``mlp`` — a multi-layer perceptron (Gemm, MatMul+bias, ReLU, Softmax);
``transformer`` — a pre-norm transformer block (LayerNorm, Q/K/V projections, multi-head
attention MatMuls, Softmax, Dropout, residual Adds, a ReLU feed-forward);
``resnet50`` — the onnx package's light ResNet-50 graph with seeded random weights
(:func:`light_model`).
Used by the whole-model tests and by ``refstack bench model cnn|mlp|transformer|resnet50``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
#: Scale of the light models' classifier weights: keeps the softmax away from one-hot.
LIGHT_HEAD_SCALE = 0.03


class _Builder:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._n = 0

    def name(self, base: str) -> str:
        self._n += 1
        return f"{base}{self._n}"

    def const(self, base: str, array: np.ndarray) -> str:
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op: str, inputs: list[str], base: str, **attrs: Any) -> str:
        out = self.name(base)
        self.nodes.append(helper.make_node(op, inputs, [out], name=f"{op}_{out}", **attrs))
        return out

    def conv_bn(self, x: str, cin: int, cout: int, k: int, stride: int, relu: bool) -> str:
        w = self.rng.normal(0, np.sqrt(2.0 / (cin * k * k)), (cout, cin, k, k)).astype(np.float32)
        y = self.node(
            "Conv",
            [x, self.const("w", w)],
            "conv",
            kernel_shape=[k, k],
            strides=[stride, stride],
            pads=[k // 2] * 4,
        )
        bn = [
            self.const("gamma", self.rng.uniform(0.5, 1.5, cout).astype(np.float32)),
            self.const("beta", self.rng.normal(0, 0.1, cout).astype(np.float32)),
            self.const("mean", self.rng.normal(0, 0.1, cout).astype(np.float32)),
            self.const("var", self.rng.uniform(0.5, 1.5, cout).astype(np.float32)),
        ]
        y = self.node("BatchNormalization", [y, *bn], "bn", epsilon=1e-5)
        return self.node("Relu", [y], "relu") if relu else y

    def linear(self, x: str, din: int, dout: int, *, gemm: bool) -> str:
        w = self.rng.normal(0, np.sqrt(1.0 / din), (din, dout)).astype(np.float32)
        b = self.rng.normal(0, 0.1, dout).astype(np.float32)
        if gemm:
            return self.node("Gemm", [x, self.const("w", w), self.const("b", b)], "fc")
        y = self.node("MatMul", [x, self.const("w", w)], "mm")
        return self.node("Add", [y, self.const("b", b)], "bias")

    def model(self, name: str, inputs: list[onnx.ValueInfoProto], out: str) -> onnx.ModelProto:
        probe = helper.make_graph(self.nodes, name, inputs, [], self.inits)
        probe_model = helper.make_model(probe, opset_imports=[helper.make_opsetid("", OPSET)])
        inferred = onnx.shape_inference.infer_shapes(probe_model).graph.value_info
        outputs = [vi for vi in inferred if vi.name == out]
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=True)
        return model


def cnn(
    *,
    batch: int = 1,
    size: int = 32,
    width: int = 16,
    blocks: tuple[int, ...] = (3, 3, 3),
    classes: int = 10,
    seed: int = 0,
) -> onnx.ModelProto:
    """ResNet-style CNN; input ``x`` of shape ``[batch, 3, size, size]``.

    One stage per entry of ``blocks`` (channels double, spatial size halves from the second
    stage on, whose first block has a 1x1 stride-2 projection shortcut).
    """
    b = _Builder(seed)
    x = b.conv_bn("x", 3, width, 3, 1, relu=True)
    x = b.node("MaxPool", [x], "pool", kernel_shape=[2, 2], strides=[2, 2])
    cin = width
    for stage, count in enumerate(blocks):
        cout = width * 2**stage
        for i in range(count):
            stride = 2 if stage > 0 and i == 0 else 1
            y = b.conv_bn(x, cin, cout, 3, stride, relu=True)
            y = b.conv_bn(y, cout, cout, 3, 1, relu=False)
            s = x if stride == 1 and cin == cout else b.conv_bn(x, cin, cout, 1, stride, relu=False)
            x = b.node("Relu", [b.node("Add", [y, s], "add")], "relu")
            cin = cout
    x = b.node("Flatten", [b.node("GlobalAveragePool", [x], "gap")], "flat", axis=1)
    out = b.linear(x, cin, classes, gemm=True)
    inp = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, size, size])
    return b.model("resnet_cnn", [inp], out)


def mlp(
    *, batch: int = 8, features: int = 64, hidden: int = 128, classes: int = 10, seed: int = 0
) -> onnx.ModelProto:
    """Three-layer perceptron with a softmax head; input ``x`` of shape ``[batch, features]``."""
    b = _Builder(seed)
    h = b.node("Relu", [b.linear("x", features, hidden, gemm=True)], "relu")
    h = b.node("Relu", [b.linear(h, hidden, hidden, gemm=False)], "relu")
    h = b.node("Dropout", [h], "drop")
    out = b.node("Softmax", [b.linear(h, hidden, classes, gemm=False)], "softmax", axis=-1)
    inp = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, features])
    return b.model("mlp", [inp], out)


def transformer(
    *, batch: int = 1, seq: int = 16, dim: int = 64, heads: int = 4, ffn: int = 128, seed: int = 0
) -> onnx.ModelProto:
    """Pre-norm transformer block; input ``x`` of shape ``[batch, seq, dim]``."""
    b = _Builder(seed)
    dh = dim // heads

    def layer_norm(x: str) -> str:
        g = b.const("ln_g", b.rng.uniform(0.8, 1.2, dim).astype(np.float32))
        beta = b.const("ln_b", b.rng.normal(0, 0.1, dim).astype(np.float32))
        return b.node("LayerNormalization", [x, g, beta], "ln", axis=-1, epsilon=1e-5)

    def heads_of(x: str, perm: list[int]) -> str:
        shape = b.const("shape", np.array([batch, seq, heads, dh], dtype=np.int64))
        return b.node("Transpose", [b.node("Reshape", [x, shape], "split")], "heads", perm=perm)

    h = layer_norm("x")
    q = heads_of(b.linear(h, dim, dim, gemm=False), [0, 2, 1, 3])
    k = heads_of(b.linear(h, dim, dim, gemm=False), [0, 2, 3, 1])
    v = heads_of(b.linear(h, dim, dim, gemm=False), [0, 2, 1, 3])
    scores = b.node("MatMul", [q, k], "scores")
    scale = b.const("scale", np.array(1.0 / np.sqrt(dh), dtype=np.float32))
    probs = b.node("Softmax", [b.node("Mul", [scores, scale], "scaled")], "probs", axis=-1)
    probs = b.node("Dropout", [probs], "drop")
    ctx = b.node("Transpose", [b.node("MatMul", [probs, v], "ctx")], "merge", perm=[0, 2, 1, 3])
    ctx = b.node("Reshape", [ctx, b.const("shape", np.array([batch, seq, dim], np.int64))], "join")
    x = b.node("Add", ["x", b.linear(ctx, dim, dim, gemm=False)], "resid")
    f = b.node("Relu", [b.linear(layer_norm(x), dim, ffn, gemm=False)], "relu")
    out = b.node("Add", [x, b.linear(f, ffn, dim, gemm=False)], "resid")
    inp = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, dim])
    return b.model("transformer_block", [inp], out)


def random_inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded float32 inputs (normal, std 1) matching the model's static input shapes."""
    rng = np.random.default_rng(seed)
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        shape = [d.dim_value or 1 for d in vi.type.tensor_type.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
        feeds[vi.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def _light_param(rng: np.random.Generator, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """A seeded value for one stripped parameter of a light model, chosen by its role."""
    if len(shape) >= 2:  # conv / fully connected weights: He-normal (the classifier smaller)
        std = np.sqrt(2.0 / math.prod(shape[1:])) * (LIGHT_HEAD_SCALE if len(shape) == 2 else 1)
        return rng.normal(0, std, shape)
    if name.endswith(("_s_0", "_riv_0")):  # batch-norm scale, running variance
        return rng.uniform(0.5, 1.0, shape)
    return rng.normal(0, 0.1, shape)  # batch-norm bias, running mean, classifier bias


def light_model(file: str, *, seed: int = 0) -> onnx.ModelProto:
    """A light model of the onnx package's backend test data with seeded random weights.

    The light models (``onnx/backend/test/data/light``) ship their graph without weights:
    each parameter is a ``ConstantOfShape`` of a shape initializer, a graph input or a
    placeholder initializer. Here every float parameter becomes a seeded initializer of
    that shape (He-normal weights, batch-norm statistics in range), so the model runs as a
    real network whose outputs are not all alike; the one remaining input is the image.
    """
    import onnx.backend.test

    path = Path(onnx.backend.test.__file__).parent / "data" / "light" / file
    if not path.is_file():
        raise FileNotFoundError(f"no light model {file!r} in the installed onnx package")
    src = onnx.load(str(path))
    rng = np.random.default_rng(seed)
    shapes = {
        i.name: tuple(int(d) for d in numpy_helper.to_array(i))
        for i in src.graph.initializer
        if i.name.endswith("__SHAPE")
    }
    params: dict[str, tuple[int, ...]] = {}
    nodes = []
    for node in src.graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in shapes:
            params[node.output[0]] = shapes[node.input[0]]
        else:
            nodes.append(node)
    for init in src.graph.initializer:
        if init.name not in shapes and init.data_type == TensorProto.FLOAT:
            params[init.name] = tuple(init.dims)
    data = src.graph.input[0]
    placeholders = {i.name for i in src.graph.initializer}
    for vi in src.graph.input[1:]:
        if vi.name not in placeholders and vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            params[vi.name] = tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)
    used = {name for node in nodes for name in node.input}
    inits = [
        numpy_helper.from_array(_light_param(rng, name, shape).astype(np.float32), name)
        for name, shape in params.items()
        if name in used
    ]
    inits += [i for i in src.graph.initializer if i.name in used and i.name not in params]
    graph = helper.make_graph(nodes, src.graph.name, [data], list(src.graph.output), inits)
    model = helper.make_model(graph, opset_imports=list(src.opset_import))
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def resnet50(*, seed: int = 0) -> onnx.ModelProto:
    """The onnx package's light ResNet-50 (input ``gpu_0/data_0`` [1, 3, 224, 224])."""
    return light_model("light_resnet50.onnx", seed=seed)


BUILTIN: dict[str, Callable[..., onnx.ModelProto]] = {
    "cnn": cnn,
    "mlp": mlp,
    "transformer": transformer,
    "resnet50": resnet50,
}
