"""ONNX import: a ``ModelProto`` (opset 13+, older opsets where semantics agree) -> IR graph.

Initializers become constants; graph inputs get static types (from the model, or from
``input_shapes`` for dynamic dims); ``bind`` turns chosen inputs into constants (how the ONNX
backend specialises shape-carrying inputs such as Reshape's ``shape``); ``value_info`` types
are checked against the compiler's shape rules as the graph is built. Each node is translated by
the importer registered for its op type (one module per op family).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import numpy_helper

from stack.adapter.context import ImportContext, elem_type
from stack.adapter.errors import ModelFormatError, UnsupportedOpError, UnsupportedTypeError
from stack.adapter.registry import importer_for, supported_ops
from stack.compiler import Graph, TensorType, verify

MIN_OPSET = 7


def load_model(source: onnx.ModelProto | bytes | str | Path) -> onnx.ModelProto:
    """Read a model from a proto, bytes or a file path (ModelFormatError when unreadable)."""
    if isinstance(source, onnx.ModelProto):
        return source
    try:
        if isinstance(source, bytes):
            return onnx.load_model_from_string(source)
        return onnx.load(str(source))
    except (OSError, onnx.onnx_cpp2py_export.checker.ValidationError, ValueError) as err:
        raise ModelFormatError(f"cannot read ONNX model: {err}", path=str(source)) from err
    except DecodeError as err:
        raise ModelFormatError(f"cannot parse ONNX model: {err}", path=str(source)) from err


def _opset(model: onnx.ModelProto) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    return 13


def _value_type(vi: onnx.ValueInfoProto, override: tuple[int, ...] | None) -> TensorType:
    if not vi.type.HasField("tensor_type"):
        kind = vi.type.WhichOneof("value")
        raise UnsupportedTypeError(f"value {vi.name!r} is a {kind}, not a tensor", node=vi.name)
    tt = vi.type.tensor_type
    dtype = elem_type(tt.elem_type, vi.name)
    if override is not None:
        return TensorType(dtype, tuple(int(d) for d in override))
    dims = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim)
    return TensorType(dtype, dims)


def _qualified(node: onnx.NodeProto) -> str:
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"


def _refuse_unknown_ops(g: onnx.GraphProto) -> None:
    """Fail before translating anything when op types lack importers, naming all of them."""
    known = set(supported_ops())
    missing = sorted({_qualified(n) for n in g.node if _qualified(n) not in known})
    if not missing:
        return
    index, first = next((i, n) for i, n in enumerate(g.node) if _qualified(n) in missing)
    raise UnsupportedOpError(
        _qualified(first),
        first.name or f"{first.op_type}_{index}",
        reason=f"no importer; the model needs {len(missing)} missing op type(s): "
        + ", ".join(missing),
        missing_ops=missing,
    )


def import_model(
    source: onnx.ModelProto | bytes | str | Path,
    *,
    input_shapes: Mapping[str, tuple[int, ...]] | None = None,
    bind: Mapping[str, np.ndarray] | None = None,
) -> Graph:
    """Translate an ONNX model into the compiler's IR graph.

    Synchronous; nothing is allocated on any device. Raises ModelFormatError (unreadable,
    dynamic dims without ``input_shapes``, ``input_shapes`` naming something not an input),
    UnsupportedOpError (op type, node name and the layers where support would have to be
    added), UnsupportedTypeError, and the compiler's
    ShapeMismatchError / ShapeInferenceError / VerifyError for inconsistent graphs.
    """
    model = load_model(source)
    opset = _opset(model)
    if opset < MIN_OPSET:
        raise ModelFormatError(f"opset {opset} is older than {MIN_OPSET}", opset=opset)
    g = model.graph
    _refuse_unknown_ops(g)
    ctx = ImportContext(g.name or "model", opset)
    shapes = dict(input_shapes or {})
    bound = dict(bind or {})
    unknown = sorted(set(shapes) - {vi.name for vi in g.input})
    if unknown:
        known = ", ".join(
            vi.name for vi in g.input if vi.name not in {i.name for i in g.initializer}
        )
        raise ModelFormatError(
            f"input_shapes names {unknown[0]!r}, which is not an input; inputs: {known}",
            node=unknown[0],
        )
    for init in g.initializer:
        ctx.add_const(init.name, numpy_helper.to_array(init))
    for vi in g.input:
        if vi.name in ctx.constants:
            continue
        if vi.name in bound:
            ctx.add_const(vi.name, np.asarray(bound[vi.name]))
            continue
        t = _value_type(vi, shapes.get(vi.name))
        if any(d < 0 for d in t.shape):
            raise ModelFormatError(
                f"input {vi.name!r} has dynamic dims {t.shape}; pass input_shapes", node=vi.name
            )
        ctx.inputs.append(vi.name)
        ctx.types[vi.name] = t
    for vi in g.value_info:
        if vi.type.HasField("tensor_type"):
            ctx.recorded[vi.name] = _value_type(vi, None)
    for i, proto in enumerate(g.node):
        name = ctx.node_name(proto, i)
        importer_for(proto.op_type, name)(ctx, proto, name)
    for vi in g.output:
        ctx.outputs.append(vi.name)
        if vi.type.HasField("tensor_type") and vi.name in ctx.types:
            ctx.recorded.setdefault(vi.name, _value_type(vi, None))
    graph = ctx.graph()
    verify(graph)
    return graph
