"""The layout pass: NHWC regions on the CPU target, the exact conversions at their edges."""

from __future__ import annotations

import numpy as np

from stack.compiler import CompileOptions, ElemType, Graph, Node, OpType, TensorType
from stack.compiler.driver import compile_graph
from stack.compiler.options import Target
from stack.compiler.passes import run_passes
from stack.runtime import ExecLayout, ExecOp

F = ElemType.F32
rng = np.random.default_rng(7)
#: A Conv's attributes as the importer normalises them.
CONV = {"strides": (1, 1), "dilations": (1, 1), "group": 1, "pads": (0, 0, 0, 0)}
W1 = rng.standard_normal((4, 4, 3, 3)).astype(np.float32)
W2 = rng.standard_normal((4, 4, 1, 1)).astype(np.float32)
POOL = {"strides": (2, 2), "dilations": (1, 1), "pads": (0, 0, 0, 0), "ceil_mode": 0}


def _graph() -> Graph:
    """x -> Conv -> Relu -> Conv(+x residual via Add) -> MaxPool -> Flatten -> y."""
    nodes = (
        Node.make("c1", OpType.CONV, ("x", "w1"), ("a",), **{**CONV, "pads": (1, 1, 1, 1)}),
        Node.make("r1", OpType.RELU, ("a",), ("b",)),
        Node.make("c2", OpType.CONV, ("b", "w2"), ("c",), **CONV),
        Node.make("add", OpType.ADD, ("c", "x"), ("d",)),
        Node.make("mp", OpType.MAXPOOL, ("d",), ("e",), kernel_shape=(2, 2), **POOL),
        Node.make("fl", OpType.FLATTEN, ("e",), ("y",), axis=1),
    )
    return Graph(
        "nhwc", nodes, ("x",), ("y",),
        types={"x": TensorType(F, (1, 4, 6, 6))}, constants={"w1": W1, "w2": W2},
    )  # fmt: skip


def _layout_only(target: Target) -> Graph:
    options = CompileOptions(target=target, passes=("infer_shapes", "layout", "infer_shapes"))
    graph, _ = run_passes(_graph(), options.passes, options)
    return graph


def test_cpu_target_puts_the_chain_in_nhwc_with_exact_conversions() -> None:
    g = _layout_only(Target.CPU)
    got = [(n.name, n.op, n.inputs, n.outputs, n.attr("layout"), n.attr("perm")) for n in g.nodes]
    assert got == [
        ("x.to_nhwc", OpType.TRANSPOSE, ("x",), ("x.nhwc",), None, (0, 2, 3, 1)),
        ("c1", OpType.CONV, ("x.nhwc", "w1"), ("a.nhwc",), "NHWC", None),
        ("r1", OpType.RELU, ("a.nhwc",), ("b.nhwc",), "NHWC", None),
        ("c2", OpType.CONV, ("b.nhwc", "w2"), ("c.nhwc",), "NHWC", None),
        ("add", OpType.ADD, ("c.nhwc", "x.nhwc"), ("d.nhwc",), "NHWC", None),
        ("mp", OpType.MAXPOOL, ("d.nhwc",), ("e.nhwc",), "NHWC", None),
        ("e.to_nchw", OpType.TRANSPOSE, ("e.nhwc",), ("e",), None, (0, 3, 1, 2)),
        ("fl", OpType.FLATTEN, ("e",), ("y",), None, None),
    ]
    assert g.types["a.nhwc"] == TensorType(F, (1, 6, 6, 4))
    assert g.types["e.nhwc"] == TensorType(F, (1, 3, 3, 4))
    assert g.types["e"] == TensorType(F, (1, 4, 3, 3))


def test_gpu_target_keeps_nchw() -> None:
    g = _layout_only(Target.GPU)
    assert [n.op for n in g.nodes] == [_.op for _ in _graph().nodes]
    assert {n.attr("layout") for n in g.nodes if n.op in (OpType.CONV, OpType.MAXPOOL)} == {"NCHW"}


def test_an_nhwc_value_read_by_an_nchw_op_and_as_an_output_is_converted_once() -> None:
    w = rng.standard_normal((4, 4, 1, 1)).astype(np.float32)
    nodes = (
        Node.make("c", OpType.CONV, ("x", "w"), ("a",), **CONV),
        Node.make("s", OpType.SOFTMAX, ("a",), ("b",), axis=1),
    )
    g0 = Graph("o", nodes, ("x",), ("a", "b"), types={"x": TensorType(F, (1, 4, 2, 2))},
               constants={"w": w})  # fmt: skip
    options = CompileOptions(passes=("infer_shapes", "layout", "infer_shapes"))
    g, _ = run_passes(g0, options.passes, options)
    assert [n.name for n in g.nodes] == ["x.to_nhwc", "c", "a.to_nchw", "s"]
    assert g.nodes[3].inputs == ("a",) and g.nodes[3].attr("layout") is None


def test_the_layout_reaches_the_op_records_and_the_model_matches_nchw() -> None:
    x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    from stack.compiler import CompiledModel

    outs = {}
    for target in Target:
        with CompiledModel(_graph(), CompileOptions(target=target)) as model:
            layouts = {op.op: op.layout for op in model.executable.ops}
            outs[target] = model.run({"x": x})["y"]
        want = ExecLayout.NHWC if target is Target.CPU else ExecLayout.NCHW
        assert layouts[ExecOp.CONV2D] is want and layouts[ExecOp.MAXPOOL] is want
    np.testing.assert_allclose(outs[Target.CPU], outs[Target.GPU], rtol=1e-5, atol=1e-5)


def test_a_compiled_model_without_a_target_takes_its_runtimes_device() -> None:
    assert (Target.for_backend("numpy"), Target.for_backend("cupy")) == (Target.CPU, Target.GPU)
    from stack.compiler import CompiledModel

    with CompiledModel(_graph()) as model:  # the NumPy device: the CPU
        assert model.runtime.umd.backend == "numpy" and model.options.target is Target.CPU
        assert {op.layout for op in model.executable.ops if op.op is ExecOp.CONV2D} == {
            ExecLayout.NHWC
        }


def test_non_float32_convolutions_stay_nchw() -> None:
    w = rng.standard_normal((4, 4, 1, 1)).astype(np.float64)
    g0 = Graph("f64", (Node.make("c", OpType.CONV, ("x", "w"), ("y",), **CONV),), ("x",), ("y",),
               types={"x": TensorType(ElemType.F64, (1, 4, 2, 2))}, constants={"w": w})  # fmt: skip
    result = compile_graph(g0)
    assert [op.layout for op in result.executable.ops] == [ExecLayout.NCHW]
