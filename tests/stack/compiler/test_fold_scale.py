"""Scale folding: ``Mul(MatMul(p, q), s)`` with ``p`` a Gemm of constant weights (through views
and Transposes) loses its Mul, the Gemm's weights scaled at compile time."""

from __future__ import annotations

import numpy as np
from onnx import helper

from stack.adapter import import_model, zoo
from stack.adapter.zoo import random_inputs
from stack.compiler import CompiledModel, CompileOptions, OpType
from stack.compiler.options import DEFAULT_PASSES
from stack.compiler.passes import run_passes


def _fuse(graph):  # type: ignore[no-untyped-def]
    out, _ = run_passes(graph, ("infer_shapes", "fuse", "dce"), CompileOptions())
    return out


def _attention_scores(mk, scale, *, relu: bool = False, extra_output: bool = False):  # type: ignore[no-untyped-def]
    """x [4, 8] -> Gemm(W, b) -> Reshape [4, 2, 4] -> Transpose [2, 4, 4] -> MatMul(·, k) * s."""
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["g"]),
        helper.make_node("Reshape", ["g", "shape"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0, 2]),
        helper.make_node("MatMul", ["t", "k"], ["scores"]),
        helper.make_node("Mul", ["scores", "s"], ["out"]),
    ]
    if relu:
        nodes[0] = helper.make_node("Gemm", ["x", "w", "b"], ["g0"])
        nodes.insert(1, helper.make_node("Relu", ["g0"], ["g"]))
    inits = {
        "w": mk.rand(8, 8),
        "b": mk.rand(8, seed=1),
        "shape": np.array([4, 2, 4], np.int64),
        "s": np.array(scale, np.float32),
    }
    outputs = [("out", None)] + ([("scores", None)] if extra_output else [])
    return mk.graph_of(nodes, [("x", [4, 8]), ("k", [2, 4, 3])], outputs, inits)


def test_the_scale_folds_into_the_gemm_weights(mk) -> None:  # type: ignore[no-untyped-def]
    graph = _attention_scores(mk, 0.5)
    g = _fuse(graph)
    assert OpType.MUL not in [n.op for n in g.nodes]
    matmul = next(n for n in g.nodes if n.op is OpType.MATMUL)
    assert matmul.outputs == ("out",)
    gemm = next(n for n in g.nodes if n.op is OpType.GEMM)
    w, b = (g.constants[name] for name in gemm.inputs[1:3])
    np.testing.assert_array_equal(w, graph.constants["w"] * np.float32(0.5))
    np.testing.assert_array_equal(b, graph.constants["b"] * np.float32(0.5))
    assert "w" not in g.constants and "b" not in g.constants  # the unscaled ones are dropped


def test_a_power_of_two_scale_changes_no_bit_of_the_result(mk) -> None:  # type: ignore[no-untyped-def]
    graph = _attention_scores(mk, 0.25)
    feeds = {"x": mk.rand(4, 8, seed=2), "k": mk.rand(2, 4, 3, seed=3)}
    unfused = CompileOptions(passes=tuple(p for p in DEFAULT_PASSES if p != "fuse"))
    with CompiledModel(graph) as folded, CompiledModel(graph, unfused) as plain:
        assert "MUL" not in [op.op.name for op in folded.executable.ops]
        assert "MUL" in [op.op.name for op in plain.executable.ops]
        np.testing.assert_array_equal(folded.run(feeds)["out"], plain.run(feeds)["out"])


def test_what_does_not_fold(mk) -> None:  # type: ignore[no-untyped-def]
    kept = [
        _attention_scores(mk, 0.5, extra_output=True),  # the unscaled scores are still read
        _attention_scores(mk, -0.5, relu=True),  # ReLU does not commute with a negative scale
        _attention_scores(mk, [0.5, 0.25, 2.0]),  # not a scalar (one per column)
    ]
    for graph in kept:
        assert OpType.MUL in [n.op for n in _fuse(graph).nodes]
    assert OpType.MUL not in [n.op for n in _fuse(_attention_scores(mk, 0.5, relu=True)).nodes]


def test_the_transformer_block_loses_its_attention_mul_and_still_matches() -> None:
    proto = zoo.transformer()
    feeds = random_inputs(proto, 0)
    graph = import_model(proto)
    unfused = CompileOptions(passes=tuple(p for p in DEFAULT_PASSES if p != "fuse"))
    with CompiledModel(graph) as folded, CompiledModel(graph, unfused) as plain:
        ops = [op.op.name for op in folded.executable.ops]
        assert "MUL" not in ops and ops.count("GEMM") == 6
        (name,) = folded.output_names
        np.testing.assert_allclose(
            folded.run(feeds)[name], plain.run(feeds)[name], rtol=1e-5, atol=1e-5
        )
