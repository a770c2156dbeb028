"""The IR DynamicQuantizeLinear below the importer: its shape and dtype rule (three outputs of
two dtypes; typed errors naming the node for what the adapter would have refused), its arity,
its lowering onto Executable op 52 and the Executable's three output records; like
QuantizeLinear it has no constant-folding evaluator, so a constant x stays a device op."""

from __future__ import annotations

import numpy as np
import pytest

from stack.compiler import (
    CompileOptions,
    ElemType,
    Graph,
    Node,
    OpType,
    ShapeInferenceError,
    TensorType,
    VerifyError,
    compile_graph,
    evaluator_for,
    rule_for,
    verify,
)
from stack.compiler.lowering import lower_node
from stack.compiler.passes import run_passes
from stack.compiler.verify import ARITY
from stack.runtime import ExecDType, ExecOp

DQL = OpType.DYNAMIC_QUANTIZE_LINEAR
OUTS = ("y", "y_scale", "y_zero_point")


def _node(outputs: tuple[str, ...] = OUTS) -> Node:
    return Node.make("dq", DQL, ["x"], outputs)


@pytest.mark.parametrize("shape", [(2, 3), (), (0, 4), (1, 2, 3, 4)])
def test_the_rule_gives_uint8_y_of_xs_shape_and_two_scalars(shape: tuple[int, ...]) -> None:
    got = rule_for(DQL)(_node(), [TensorType(ElemType.F32, shape)], {})
    assert got == [
        TensorType(ElemType.U8, shape),
        TensorType(ElemType.F32, ()),
        TensorType(ElemType.U8, ()),
    ]


@pytest.mark.parametrize("dtype", [ElemType.F64, ElemType.F16, ElemType.U8, ElemType.I32])
def test_an_x_not_float32_is_a_typed_error_naming_the_node(dtype: ElemType) -> None:
    with pytest.raises(ShapeInferenceError) as err:
        rule_for(DQL)(_node(), [TensorType(dtype, (4,))], {})
    assert err.value.node == "dq" and err.value.op == "DynamicQuantizeLinear"
    assert f"takes a float32 x, got {dtype.value}[4]" in str(err.value)


def test_a_missing_x_is_a_typed_error_naming_the_node() -> None:
    with pytest.raises(ShapeInferenceError, match="input 0 is required") as err:
        rule_for(DQL)(_node(), [None], {})
    assert err.value.node == "dq"


def test_it_lowers_to_op_52_without_attributes_and_takes_one_input_and_three_outputs() -> None:
    op, attrs = lower_node(_node())
    assert op is ExecOp.DYNAMIC_QUANTIZE_LINEAR == 52 and attrs == ()
    spec = ARITY[DQL]
    assert (spec.min_in, spec.max_in, spec.min_out, spec.max_out) == (1, 1, 3, 3)


def test_the_verifier_refuses_two_outputs() -> None:
    graph = Graph("g", (_node(OUTS[:2]),), ("x",), OUTS[:1], {"x": TensorType(ElemType.F32, (4,))})
    with pytest.raises(VerifyError) as err:
        verify(graph)
    assert err.value.details["check"] == "arity" and err.value.node == "dq"
    assert "2 outputs, expected 3..3" in str(err.value)


def test_a_constant_x_is_not_folded() -> None:
    assert evaluator_for(DQL) is None
    x = np.linspace(-1, 2, 6, dtype=np.float32)
    graph = Graph("g", (_node(),), (), OUTS, {}, {"x": x})
    out, _ = run_passes(graph, ("infer_shapes", "fold_constants", "dce"), CompileOptions())
    assert [n.op for n in out.nodes] == [DQL] and set(out.constants) == {"x"}


def test_the_executable_records_three_outputs_of_their_own_dtypes() -> None:
    """One op record: x in, then y, y_scale and y_zero_point, U8, F32 and U8, the last two
    scalars (each its own aligned IO slot: they are model outputs)."""
    graph = Graph("g", (_node(),), ("x",), OUTS, {"x": TensorType(ElemType.F32, (3, 5))})
    exe = compile_graph(graph).executable
    (op,) = exe.ops
    assert op.op is ExecOp.DYNAMIC_QUANTIZE_LINEAR and op.attrs == ()
    assert [exe.tensors[i].name for i in op.inputs] == ["x"]
    outs = [exe.tensors[i] for i in op.outputs]
    assert [t.name for t in outs] == list(OUTS)
    assert [t.dtype for t in outs] == [ExecDType.U8, ExecDType.F32, ExecDType.U8]
    assert [t.shape for t in outs] == [(3, 5), (), ()]
    assert len({t.offset for t in outs}) == 3
