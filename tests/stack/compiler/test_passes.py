"""Each pass on small graphs: what it rewrites, and that values are preserved."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from stack.compiler import OpType, PassError
from stack.compiler.options import CompileOptions, Target
from stack.compiler.passes import get_pass, run_passes

OPTS = CompileOptions()


def _run(graph, *names):
    out, _ = run_passes(graph, ("infer_shapes", *names), OPTS)
    return out


def test_unknown_pass_lists_known_ones() -> None:
    with pytest.raises(PassError, match="fold_batchnorm"):
        get_pass("no-such-pass")


def test_constant_folding_evaluates_constant_subgraphs(mk) -> None:
    nodes = [
        helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
        helper.make_node("Add", ["wt", "wt"], ["w2"]),
        helper.make_node("MatMul", ["x", "w2"], ["y"]),
    ]
    w = mk.rand(4, 3)
    g = _run(mk.graph_of(nodes, [("x", [2, 3])], [("y", None)], {"w": w}), "fold_constants")
    assert [n.op for n in g.nodes] == [OpType.MATMUL]
    np.testing.assert_array_equal(g.constants["w2"], w.T + w.T)


def test_reshape_with_constant_shape_becomes_a_resolved_view(mk) -> None:
    nodes = [helper.make_node("Reshape", ["x", "s"], ["y"])]
    g = mk.graph_of(nodes, [("x", [2, 3, 4])], [("y", None)], {"s": np.array([0, -1], np.int64)})
    g = _run(g, "fold_constants")
    assert g.nodes[0].inputs == ("x",)
    assert g.nodes[0].attr("shape") == (2, 12)


def test_batchnorm_folds_into_conv_with_equal_numbers(mk) -> None:
    w, x = mk.rand(4, 3, 1, 1), mk.rand(1, 3, 5, 5, seed=1)
    gamma, beta = mk.rand(4, seed=2), mk.rand(4, seed=3)
    mean, var = mk.rand(4, seed=4), np.abs(mk.rand(4, seed=5)) + 0.5
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"]),
        helper.make_node("BatchNormalization", ["c", "g", "b", "m", "v"], ["y"], epsilon=1e-3),
    ]
    inits = {"w": w, "g": gamma, "b": beta, "m": mean, "v": var}
    g = _run(mk.graph_of(nodes, [("x", [1, 3, 5, 5])], [("y", None)], inits), "fold_batchnorm")
    assert [n.op for n in g.nodes] == [OpType.CONV]
    conv = g.nodes[0]
    w2, b2 = g.constants[conv.inputs[1]], g.constants[conv.inputs[2]]
    folded = np.einsum("oc,nchw->nohw", w2[:, :, 0, 0], x) + b2[None, :, None, None]
    plain = np.einsum("oc,nchw->nohw", w[:, :, 0, 0], x)
    s = (gamma / np.sqrt(var + 1e-3))[None, :, None, None]
    ref = (plain - mean[None, :, None, None]) * s + beta[None, :, None, None]
    np.testing.assert_allclose(folded, ref, rtol=1e-5, atol=1e-5)


def test_fusion_absorbs_bias_and_relu(mk) -> None:
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c", "cb"], ["cbias"]),
        helper.make_node("Relu", ["cbias"], ["r"]),
        helper.make_node("Flatten", ["r"], ["f"]),
        helper.make_node("MatMul", ["f", "fw"], ["m"]),
        helper.make_node("Add", ["m", "fb"], ["mb"]),
        helper.make_node("Relu", ["mb"], ["h"]),
        helper.make_node("Add", ["h", "h"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    inits = {
        "w": mk.rand(2, 1, 3, 3),
        "cb": mk.rand(1, 2, 1, 1),
        "fw": mk.rand(32, 5),
        "fb": mk.rand(5),
    }
    g = _run(mk.graph_of(nodes, [("x", [1, 1, 4, 4])], [("y", None)], inits), "fuse")
    ops = [(n.op, n.attr("relu", 0), len(n.inputs)) for n in g.nodes]
    assert ops == [
        (OpType.CONV, 1, 3),
        (OpType.FLATTEN, 0, 1),
        (OpType.GEMM, 1, 3),
        (OpType.ADD, 1, 2),
    ]


def test_conv_residual_add_and_relu_fuse_into_the_conv(mk) -> None:
    """Conv -> Add(y, shortcut) -> Relu becomes one Conv with the shortcut as its residual
    input, placed after the shortcut's producer; a Conv without bias gets a zero bias."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "p"], ["s"]),
        helper.make_node("Add", ["y", "s"], ["a"]),
        helper.make_node("Relu", ["a"], ["out"]),
    ]
    inits = {"w": mk.rand(4, 2, 3, 3), "p": mk.rand(4, 2, 1, 1)}
    g = _run(mk.graph_of(nodes, [("x", [1, 2, 5, 5])], [("out", None)], inits), "fuse")
    assert [(n.op, n.attr("relu", 0), len(n.inputs)) for n in g.nodes] == [
        (OpType.CONV, 0, 2),
        (OpType.CONV, 1, 4),
    ]
    shortcut, fused = g.nodes
    assert fused.inputs[3] == shortcut.outputs[0] and fused.outputs == ("out",)
    np.testing.assert_array_equal(g.constants[fused.inputs[2]], np.zeros(4, np.float32))


def test_conv_relu_and_max_pool_fuse_into_one_conv(mk) -> None:
    """Conv -> Relu -> MaxPool becomes one Conv carrying the pool; its output is the pooled
    shape; a MaxPool with dilations or after a residual Conv stays apart."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["y"], ["r"]),
        helper.make_node(
            "MaxPool", ["r"], ["out"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]
        ),
    ]
    graph = mk.graph_of(nodes, [("x", [1, 2, 8, 8])], [("out", None)], {"w": mk.rand(4, 2, 3, 3)})
    g = _run(graph, "fuse", "infer_shapes")
    (conv,) = g.nodes
    assert conv.op is OpType.CONV and conv.outputs == ("out",) and conv.attr("relu") == 1
    assert (conv.attr("pool_kernel"), conv.attr("pool_strides"), conv.attr("pool_pads")) == (
        (3, 3),
        (2, 2),
        (1, 1, 1, 1),
    )
    assert g.type_of("out").shape == (1, 4, 4, 4)
    dilated = [
        helper.make_node("Conv", ["x", "w"], ["y"]),
        helper.make_node("MaxPool", ["y"], ["out"], kernel_shape=[2, 2], dilations=[2, 2]),
    ]
    graph = mk.graph_of(dilated, [("x", [1, 2, 8, 8])], [("out", None)], {"w": mk.rand(4, 2, 1, 1)})
    g = _run(graph, "fuse")
    assert [n.op for n in g.nodes] == [OpType.CONV, OpType.MAXPOOL]


def test_relu_fuses_into_a_gemm_through_its_view(mk) -> None:
    """MatMul(x 3-D, W) + bias -> Relu: the Gemm (read through Reshape views) takes the ReLU."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["a"]),
        helper.make_node("Relu", ["a"], ["out"]),
    ]
    inits = {"w": mk.rand(8, 5), "b": mk.rand(5)}
    g = _run(mk.graph_of(nodes, [("x", [2, 3, 8])], [("out", None)], inits), "fuse")
    assert [(n.op, n.attr("relu", 0)) for n in g.nodes] == [
        (OpType.RESHAPE, 0), (OpType.GEMM, 1), (OpType.RESHAPE, 0)
    ]  # fmt: skip
    assert g.nodes[-1].outputs == ("out",)


def test_a_broadcast_add_is_not_a_residual(mk) -> None:
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["y"]),
        helper.make_node("Add", ["y", "z"], ["out"]),
    ]
    g = _run(
        mk.graph_of(nodes, [("x", [1, 2, 3, 3]), ("z", [1, 4, 1, 1])], [("out", None)],
                    {"w": mk.rand(4, 2, 1, 1)}),
        "fuse",
    )  # fmt: skip
    assert [n.op for n in g.nodes] == [OpType.CONV, OpType.ADD]


def test_relu_is_not_fused_when_the_raw_value_is_still_needed(mk) -> None:
    nodes = [
        helper.make_node("Gemm", ["x", "w"], ["g"]),
        helper.make_node("Relu", ["g"], ["r"]),
        helper.make_node("Add", ["g", "r"], ["y"]),
    ]
    g = _run(mk.graph_of(nodes, [("x", [2, 3])], [("y", None)], {"w": mk.rand(3, 3)}), "fuse")
    assert [n.op for n in g.nodes] == [OpType.GEMM, OpType.RELU, OpType.ADD]


def test_lowering_and_dce(mk) -> None:
    nodes = [
        helper.make_node("Sum", ["a", "b", "c"], ["s"]),
        helper.make_node("Relu", ["a"], ["dead"]),
        helper.make_node("Dropout", ["s"], ["y"]),
    ]
    ins = [("a", [3]), ("b", [3]), ("c", [3])]
    g = _run(mk.graph_of(nodes, ins, [("y", None)]), "lower", "dce")
    assert [n.op for n in g.nodes] == [OpType.ADD, OpType.ADD, OpType.IDENTITY]
    assert g.nodes[1].inputs[0] == g.nodes[0].outputs[0]


def test_dce_keeps_the_types_of_a_kept_nodes_unread_outputs(mk) -> None:
    """Only TopK's values are read: the node stays, and its indices, which it still writes,
    keep their type (the typed verifier once refused the graph for the missing one)."""
    k = np.array([2], np.int64)
    nodes = [
        helper.make_node("TopK", ["x", "k"], ["v", "i"]),
        helper.make_node("Relu", ["v"], ["y"]),
    ]
    g = _run(mk.graph_of(nodes, [("x", [3, 5])], [("y", None)], {"k": k}), "dce")
    assert [n.op for n in g.nodes] == [OpType.TOPK, OpType.RELU]
    assert str(g.type_of("i")) == "int64[3, 2]"


def test_layout_pass_marks_the_conv_family(mk) -> None:
    nodes = [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2])]
    graph = mk.graph_of(nodes, [("x", [1, 1, 4, 4])], [("y", None)])
    gpu = CompileOptions(target=Target.GPU)
    g, _ = run_passes(graph, ("infer_shapes", "layout"), gpu)
    assert [(n.op, n.attr("layout")) for n in g.nodes] == [(OpType.MAXPOOL, "NCHW")]
    g = _run(graph, "layout")  # the CPU target: NHWC between two conversions
    assert [(n.op, n.attr("layout")) for n in g.nodes] == [
        (OpType.TRANSPOSE, None), (OpType.MAXPOOL, "NHWC"), (OpType.TRANSPOSE, None)
    ]  # fmt: skip


def test_gemm_bias_and_batchnorm_relu_fuse(mk) -> None:
    nodes = [
        helper.make_node("Gemm", ["x", "w"], ["g"], transB=1, alpha=2.0, beta=0.5),
        helper.make_node("Add", ["gb", "g"], ["h"]),
        helper.make_node("Relu", ["h"], ["y"]),
        helper.make_node("BatchNormalization", ["z", "s", "b", "m", "v"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["y2"]),
    ]
    ones = np.ones(2, np.float32)
    inits = {"w": mk.rand(3, 4), "gb": mk.rand(1, 3), "s": ones, "b": ones, "m": ones, "v": ones}
    g = mk.graph_of(nodes, [("x", [2, 4]), ("z", [1, 2, 2, 2])], [("y", None), ("y2", None)], inits)
    g = _run(g, "fuse")
    gemm, bn = g.nodes
    assert gemm.op is OpType.GEMM and len(gemm.inputs) == 3
    assert (gemm.attr("relu"), gemm.attr("beta"), gemm.attr("alpha")) == (1, 1.0, 2.0)
    assert bn.op is OpType.BATCHNORM and bn.attr("relu") == 1 and bn.outputs == ("y2",)
