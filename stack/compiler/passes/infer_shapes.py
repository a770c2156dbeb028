"""Shape and dtype inference: give every value a static :class:`TensorType`.

Graph inputs must already be typed (the adapter records them); a node with an NHWC ``layout``
gets its NCHW rule through a permutation (:func:`stack.compiler.layouts.infer_node`). Types
the adapter recorded for intermediate values (ONNX ``value_info``) are checked against what the
producer yields: a disagreement raises :class:`ShapeMismatchError` with the per-dimension report.
"""

from __future__ import annotations

from stack.compiler.errors import ShapeInferenceError, ShapeMismatchError
from stack.compiler.ir import Graph, TensorType
from stack.compiler.layouts import infer_node
from stack.compiler.options import CompileOptions
from stack.compiler.passes import register
from stack.compiler.verify import mismatch_report


def infer_shapes(graph: Graph, options: CompileOptions) -> Graph:
    """Return ``graph`` with ``types`` filled for every value."""
    types: dict[str, TensorType] = {}
    for name in graph.inputs:
        t = graph.types.get(name)
        if t is None:
            raise ShapeInferenceError(f"graph input {name!r} has no static type", node=name)
        types[name] = t
    for node in graph.nodes:
        in_types = [(types.get(v) or graph.type_of(v)) if v else None for v in node.inputs]
        outs = infer_node(node, in_types, graph.constants)
        for value, t in zip(node.outputs, outs, strict=False):
            if not value:
                continue
            recorded = graph.types.get(value)
            if recorded is not None and recorded != t and _comparable(recorded, t):
                raise ShapeMismatchError(
                    mismatch_report(value, recorded, t),
                    op=node.op.value,
                    node=node.name,
                    value=value,
                    expected=str(recorded),
                    got=str(t),
                )
            types[value] = t
    return graph.replace(types=types)


def _comparable(recorded: TensorType, actual: TensorType) -> bool:
    # value_info with unknown dims is recorded as -1: only known dims are compared
    if recorded.dtype != actual.dtype or len(recorded.shape) != len(actual.shape):
        return True
    return any(r >= 0 and r != a for r, a in zip(recorded.shape, actual.shape, strict=True))


register("infer_shapes", infer_shapes)
