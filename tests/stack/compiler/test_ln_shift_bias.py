"""A LayerNormalization's shift folded into the Gemms reading it (``fold_ln_shift``), and small
Gemms' bias rows expanded to Y's shape (``expand_bias``)."""

from __future__ import annotations

import numpy as np
from onnx import helper

from stack.adapter import import_model, zoo
from stack.adapter.zoo import random_inputs
from stack.compiler import CompiledModel, CompileOptions, OpType
from stack.compiler.options import DEFAULT_PASSES
from stack.compiler.passes import run_passes

WITHOUT = CompileOptions(
    passes=tuple(p for p in DEFAULT_PASSES if p not in ("fold_ln_shift", "expand_bias"))
)


def _passes(graph, *names):  # type: ignore[no-untyped-def]
    out, _ = run_passes(graph, ("infer_shapes", "fuse", *names, "dce"), CompileOptions())
    return out


def _ln_gemm(mk, *, other_reader: bool = False):  # type: ignore[no-untyped-def]
    """x [4, 8] -> LayerNormalization(g, b) -> Gemm(W, c) [4, 6] (and a Relu of the norm)."""
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g", "b"], ["n"], axis=-1),
        helper.make_node("Gemm", ["n", "w", "c"], ["out"]),
    ]
    outputs = [("out", None)]
    if other_reader:
        nodes.append(helper.make_node("Relu", ["n"], ["r"]))
        outputs.append(("r", None))
    inits = {"g": mk.rand(8), "b": mk.rand(8, seed=1), "w": mk.rand(8, 6, seed=2)}
    inits["c"] = mk.rand(6, seed=3)
    return mk.graph_of(nodes, [("x", [4, 8])], outputs, inits)


def test_the_shift_moves_into_the_gemm_bias(mk) -> None:  # type: ignore[no-untyped-def]
    graph = _ln_gemm(mk)
    g = _passes(graph, "fold_ln_shift")
    ln = next(n for n in g.nodes if n.op is OpType.LAYERNORM)
    assert len(ln.inputs) == 2
    gemm = next(n for n in g.nodes if n.op is OpType.GEMM)
    want = graph.constants["b"].astype(np.float64) @ graph.constants["w"] + graph.constants["c"]
    np.testing.assert_allclose(g.constants[gemm.inputs[2]], want, rtol=1e-6)


def test_a_norm_read_by_another_op_keeps_its_shift(mk) -> None:  # type: ignore[no-untyped-def]
    g = _passes(_ln_gemm(mk, other_reader=True), "fold_ln_shift")
    assert len(next(n for n in g.nodes if n.op is OpType.LAYERNORM).inputs) == 3


def test_a_small_gemm_gets_its_bias_as_a_whole_constant(mk) -> None:  # type: ignore[no-untyped-def]
    graph = _ln_gemm(mk)
    g = _passes(graph, "expand_bias")
    c = g.constants[next(n for n in g.nodes if n.op is OpType.GEMM).inputs[2]]
    np.testing.assert_array_equal(c, np.broadcast_to(graph.constants["c"], (4, 6)))


def test_the_transformer_block_still_matches() -> None:
    proto = zoo.transformer()
    feeds = random_inputs(proto, 0)
    graph = import_model(proto)
    with CompiledModel(graph) as folded, CompiledModel(graph, WITHOUT) as plain:
        lns = [op for op in folded.executable.ops if op.op.name == "LAYERNORM"]
        assert len(lns) == 2 and all(len(op.inputs) == 2 for op in lns)
        (name,) = folded.output_names
        np.testing.assert_allclose(
            folded.run(feeds)[name], plain.run(feeds)[name], rtol=1e-5, atol=1e-5
        )
