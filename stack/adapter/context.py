"""The import context: the IR graph under construction while ONNX nodes are translated.

Importers call :meth:`ImportContext.emit` for each IR node; the context runs the compiler's
shape rule on it at once, so later importers can read static shapes (``auto_pad``, 1-D
promotion, Dropout masks) and value_info from the model can be checked as the graph grows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from stack.adapter.errors import (
    DynamicShapeError,
    ModelFormatError,
    UnsupportedOpError,
    UnsupportedTypeError,
)
from stack.compiler import (
    ElemType,
    Graph,
    Node,
    OpType,
    ShapeMismatchError,
    TensorType,
    evaluator_for,
    freeze_array,
    mismatch_report,
    rule_for,
)


def elem_type(onnx_type: int, where: str) -> ElemType:
    """The IR element type of an ONNX TensorProto data type."""
    try:
        np_dtype = helper.tensor_dtype_to_np_dtype(onnx_type)
        return ElemType.from_numpy(np_dtype)
    except (KeyError, ValueError, TypeError):
        name = onnx.TensorProto.DataType.Name(onnx_type) if onnx_type else "UNDEFINED"
        raise UnsupportedTypeError(
            f"element type {name} has no IR equivalent",
            node=where,
            dtype=name,
            layers=["adapter", "compiler", "umd", "kmd"],
        ) from None


#: Constant results larger than this stay nodes (the compiler folds or runs them).
FOLD_LIMIT = 1 << 16


class ImportContext:
    """Mutable builder of one IR graph (used by one import, then discarded)."""

    def __init__(self, name: str, opset: int) -> None:
        self.name = name
        self.opset = opset
        self.nodes: list[Node] = []
        self.constants: dict[str, np.ndarray] = {}
        self.types: dict[str, TensorType] = {}
        self.recorded: dict[str, TensorType] = {}
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self._names: set[str] = set()
        self._counter = 0

    # values -------------------------------------------------------------------------------
    def const(self, value: str) -> np.ndarray | None:
        """The constant array of ``value``, or None when it is computed at run time."""
        return self.constants.get(value) if value else None

    def const_input(self, proto: onnx.NodeProto, name: str, i: int, role: str) -> np.ndarray | None:
        """Input ``i``'s constant value (None when omitted); DynamicShapeError naming the tensor
        when it is computed at run time."""
        value = proto.input[i] if i < len(proto.input) else ""
        if not value:
            return None
        arr = self.constants.get(value)
        if arr is None:
            raise DynamicShapeError(proto.op_type, name, value, role)
        return arr

    def add_const(self, value: str, array: np.ndarray) -> str:
        self.constants[value] = freeze_array(np.asarray(array))
        return value

    def type_of(self, value: str) -> TensorType:
        """The static type of ``value`` (ModelFormatError when unknown)."""
        if value in self.types:
            return self.types[value]
        if value in self.constants:
            arr = self.constants[value]
            return TensorType(ElemType.from_numpy(arr.dtype), tuple(arr.shape))
        raise ModelFormatError(f"value {value!r} has no static type", node=value)

    def fresh(self, base: str) -> str:
        """A value or node name not used yet."""
        self._counter += 1
        return f"{base}__{self._counter}"

    def node_name(self, proto: onnx.NodeProto, index: int) -> str:
        name = proto.name or f"{proto.op_type}_{index}"
        if name in self._names:
            name = self.fresh(name)
        self._names.add(name)
        return name

    # nodes --------------------------------------------------------------------------------
    def emit(
        self, name: str, op: OpType, inputs: list[str], outputs: list[str], **attrs: Any
    ) -> None:
        """Append an IR node and type its outputs with the compiler's shape rule; a node whose
        inputs are all constants is folded at once when the compiler can evaluate it (so shape
        computations such as Shape -> Gather -> Concat -> Reshape resolve during import)."""
        node = Node.make(name, op, inputs, outputs, **attrs)
        if self._fold(node):
            return
        in_types = [self.type_of(v) if v else None for v in node.inputs]
        for value, t in zip(
            node.outputs, rule_for(op)(node, in_types, self.constants), strict=False
        ):
            if not value:
                continue
            recorded = self.recorded.get(value)
            if recorded is not None and _differs(recorded, t):
                raise ShapeMismatchError(
                    mismatch_report(value, recorded, t),
                    op=op.value,
                    node=name,
                    value=value,
                    expected=str(recorded),
                    got=str(t),
                )
            self.types[value] = t
        self.nodes.append(node)

    def _fold(self, node: Node) -> bool:
        present = [v for v in node.inputs if v]
        fn = evaluator_for(node.op)
        if fn is None or not present or any(v not in self.constants for v in present):
            return False
        in_types = [self.type_of(v) if v else None for v in node.inputs]
        rule_for(node.op)(node, in_types, self.constants)  # typed errors before evaluating
        results = fn(node, [self.constants[v] for v in present])
        if results is None or any(np.asarray(r).size > FOLD_LIMIT for r in results):
            return False
        for value, result in zip(node.outputs, results, strict=False):
            if value:
                self.add_const(value, np.asarray(result))
        return True

    def alias(self, name: str, src: str, dst: str) -> None:
        """``dst`` is ``src`` (an Identity view, or a constant when ``src`` is one)."""
        if src in self.constants:
            self.add_const(dst, self.constants[src])
        else:
            self.emit(name, OpType.IDENTITY, [src], [dst])

    def unsupported(
        self, proto: onnx.NodeProto, name: str, reason: str, **kw: Any
    ) -> UnsupportedOpError:
        return UnsupportedOpError(proto.op_type, name, reason=reason, **kw)

    def graph(self) -> Graph:
        types = {k: v for k, v in self.types.items() if k not in self.constants}
        return Graph(
            self.name,
            tuple(self.nodes),
            tuple(self.inputs),
            tuple(self.outputs),
            types,
            self.constants,
        )


def _differs(recorded: TensorType, actual: TensorType) -> bool:
    if recorded.dtype != actual.dtype or len(recorded.shape) != len(actual.shape):
        return True
    return any(r >= 0 and r != a for r, a in zip(recorded.shape, actual.shape, strict=True))


def present_inputs(proto: onnx.NodeProto, limit: int) -> list[str]:
    """The node's first ``limit`` inputs without the omitted (empty-named) optional tail."""
    ins = list(proto.input[:limit])
    while ins and not ins[-1]:
        ins.pop()
    return ins


def attributes(proto: onnx.NodeProto) -> dict[str, Any]:
    """The node's attributes as Python values (strings decoded, tensors as arrays)."""
    out: dict[str, Any] = {}
    for attr in proto.attribute:
        value = helper.get_attribute_value(attr)
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        elif isinstance(value, onnx.TensorProto):
            value = numpy_helper.to_array(value)
        out[attr.name] = value
    return out
