"""The scaffolding the RNN, GRU and LSTM adapter tests share: their sizes, tolerances and
lengths, the operands of a node of one direction count (:func:`operands`), the one-node model
(:func:`recurrent_model`) and the raw one of given input types (:func:`raw_model`), the
comparison (:func:`assert_close`) and the checks of a node's ModelFormatError and
UnsupportedOpError (:func:`assert_model_format_error`, :func:`assert_unsupported`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError, UnsupportedOpError
from tests.stack.adapter.both import ort_outputs, reference_outputs, stack_outputs

S, N, IN, H = 5, 3, 4, 6
TOL = {np.float32: 1e-5, np.float16: 5e-3, np.float64: 1e-12}
LENS = np.array([5, 2, 0], np.int32)
DIRECTIONS = {"forward": 1, "reverse": 1, "bidirectional": 2}
#: The optional inputs' tags in ``given``: B, sequence_lens, initial_h, initial_c and P.
TAGS = "blhcp"


def operands(
    rng: np.random.Generator,
    names: tuple[str, ...],
    gates: int,
    d: int,
    given: str,
    dtype: Any = np.float32,
    layout: int = 0,
) -> dict[str, np.ndarray]:
    """X, W and R (``gates`` H rows), and those of the optional ``names`` whose tags (TAGS) are
    in ``given``, drawn from ``rng`` in ONNX's order."""
    state = (d, N, H) if layout == 0 else (N, d, H)
    arrays = {
        "X": rng.standard_normal((S, N, IN) if layout == 0 else (N, S, IN)).astype(dtype),
        "W": (rng.standard_normal((d, gates * H, IN)) * 0.5).astype(dtype),
        "R": (rng.standard_normal((d, gates * H, H)) * 0.5).astype(dtype),
        "B": rng.standard_normal((d, 2 * gates * H)).astype(dtype),
        "sequence_lens": LENS,
        "initial_h": rng.standard_normal(state).astype(dtype),
    }
    if "P" in names:
        arrays["initial_c"] = rng.standard_normal(state).astype(dtype)
        arrays["P"] = rng.standard_normal((d, 3 * H)).astype(dtype)
    keep = {"X", "W", "R"} | {
        name for tag, name in zip(TAGS, names[3:], strict=False) if tag in given
    }
    return {k: v for k, v in arrays.items() if k in keep}


def recurrent_model(
    op: str,
    names: tuple[str, ...],
    arrays: dict[str, np.ndarray],
    consts: tuple[str, ...],
    outputs: tuple[str, ...],
    opset: int,
    **attrs: Any,
) -> onnx.ModelProto:
    """A one-node ``op`` model on ``arrays`` (those in ``consts`` initializers), node n0."""
    last = max(i for i, n in enumerate(names) if n in arrays)
    ins = [n if n in arrays else "" for n in names[: last + 1]]
    node = helper.make_node(op, ins, list(outputs), name="n0", **attrs)
    inputs = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
        for n, a in arrays.items()
        if n not in consts
    ]
    outs = [helper.make_empty_tensor_value_info(v) for v in outputs if v]
    inits = [numpy_helper.from_array(arrays[n], n) for n in consts]
    graph = helper.make_graph([node], "g", inputs, outs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def raw_model(
    op: str,
    given: dict[str, tuple[int, list[int]] | None],
    opset: int,
    inputs: tuple[str, ...] | None,
    outputs: tuple[str, ...],
    **attrs: Any,
) -> onnx.ModelProto:
    """A one-node ``op`` model of the inputs ``given`` (name -> element type and shape, None
    for one left out; ``inputs``: the node's input names instead), node n0."""
    names = inputs or tuple(n if t else "" for n, t in given.items())
    while inputs is None and not names[-1]:
        names = names[:-1]
    node = helper.make_node(op, list(names), list(outputs), name="n0", **attrs)
    vis = [helper.make_tensor_value_info(n, *t) for n, t in given.items() if t]
    graph = helper.make_graph(
        [node], "g", vis, [helper.make_empty_tensor_value_info(v) for v in outputs if v]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def assert_close(got: list[np.ndarray], ref: list[np.ndarray], dtype: Any) -> None:
    assert len(got) == len(ref)
    for g, r in zip(got, ref, strict=True):
        assert g.dtype == r.dtype == dtype and g.shape == r.shape
        np.testing.assert_allclose(g, r, rtol=TOL[dtype], atol=TOL[dtype])


def assert_model_format_error(op: str, model: onnx.ModelProto, message: str) -> None:
    with pytest.raises(ModelFormatError, match=message) as err:
        import_model(model)
    assert type(err.value) is ModelFormatError
    assert err.value.node == "n0" and err.value.op == op, err.value


def assert_unsupported(op: str, model: onnx.ModelProto, message: str) -> None:
    with pytest.raises(UnsupportedOpError, match=message) as err:
        import_model(model)
    assert err.value.node == "n0" and err.value.op_type == op and err.value.layers == ("adapter",)


def assert_layout_1_matches(
    model: Callable[..., onnx.ModelProto], arrays: dict[str, np.ndarray], **attrs: Any
) -> None:
    """``model`` (the op's builder) of layout 1 on ``arrays`` against onnxruntime's layout 0 on
    the same operands transposed (it runs no batch-first op)."""
    batch_first = [k for k in ("X", "initial_h", "initial_c") if k in arrays]
    first = {**arrays, **{k: arrays[k].transpose(1, 0, 2).copy() for k in batch_first}}
    y, *states = ort_outputs(model(first, **attrs), first)
    want = [y.transpose(2, 0, 1, 3), *(s.transpose(1, 0, 2) for s in states)]
    assert_close(stack_outputs(model(arrays, layout=1, **attrs), arrays), want, np.float32)


def assert_named_outputs_match(
    model: Callable[..., onnx.ModelProto],
    arrays: dict[str, np.ndarray],
    outputs: tuple[str, ...],
    roles: tuple[str, ...],
    **attrs: Any,
) -> None:
    """The outputs ``model`` names get their values, the others fresh ones."""
    some = model(arrays, outputs=outputs, **attrs)
    (node,) = import_model(some).nodes
    named = [v for v in outputs if v]
    assert [v for v in node.outputs if not v.startswith("n0.")] == named
    every = ort_outputs(model(arrays, **attrs), arrays)
    assert_close(stack_outputs(some, arrays), [every[roles.index(v)] for v in named], np.float32)


def assert_runs_between_other_ops(x: np.ndarray, inits: dict[str, np.ndarray], node: onnx.NodeProto,
                                  state: str) -> None:  # fmt: skip
    """x W_in (a MatMul, W_in the initializer ``w_in``) feeds ``node`` (on h and the graph input
    lens), whose Y loses its direction axis (a Squeeze) and whose ``state`` is a graph output;
    ``inits`` are initializers."""
    nodes = [helper.make_node("MatMul", ["x", "w_in"], ["h"]), node,
             helper.make_node("Squeeze", ["Y", "axes"], ["y"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                     helper.make_tensor_value_info("lens", TensorProto.INT32, [N])],
        [helper.make_empty_tensor_value_info("y"), helper.make_empty_tensor_value_info(state)],
        [numpy_helper.from_array(a, n) for n, a in inits.items()]
        + [numpy_helper.from_array(np.array([1], np.int64), "axes")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    feeds = {"x": x, "lens": LENS}
    got, want = stack_outputs(model, feeds), ort_outputs(model, feeds)
    assert got[0].shape == (S, N, H)
    assert_close(got, want, np.float32)


def assert_folds_at_import(model: onnx.ModelProto) -> None:
    """A node of constant operands folds at import, to onnxruntime's results."""
    assert import_model(model).nodes == ()
    assert_close(stack_outputs(model, {}), ort_outputs(model, {}), np.float32)


def assert_matches_onnxruntime(model: onnx.ModelProto, arrays: dict[str, np.ndarray]) -> list:
    """The stack's float32 outputs of ``model`` on ``arrays`` are onnxruntime's; returned."""
    got = stack_outputs(model, arrays)
    assert_close(got, ort_outputs(model, arrays), np.float32)
    return got


def assert_matches_the_reference(
    model: onnx.ModelProto, arrays: dict[str, np.ndarray], dtype: Any
) -> None:
    """The stack's outputs are ONNX's reference's, cast to ``dtype`` (the reference's Affine
    promotes a float16 state to float32; Y it casts back to X's type)."""
    want = [r.astype(dtype) for r in reference_outputs(model, arrays)]
    assert_close(stack_outputs(model, arrays), want, dtype)


def assert_same_bytes(
    model: onnx.ModelProto, explicit: onnx.ModelProto, arrays: dict[str, np.ndarray]
) -> None:
    """``model`` and ``explicit`` (its defaults spelled out) give the same outputs, bit for bit."""
    got, want = stack_outputs(model, arrays), stack_outputs(explicit, arrays)
    assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want, strict=True))
