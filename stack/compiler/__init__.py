"""The compiler: IR, verifier, passes, memory planner, Executable emission, compile-and-run.

Imports only ``stack.runtime`` (the Executable format and the Runtime) below it. The adapter
uses the names re-exported here; the emitting half (``compile_graph``, ``CompiledModel``)
is loaded on first use so that building and checking IR does not start the lower layers.
"""

from typing import TYPE_CHECKING, Any

from stack.compiler.errors import (
    EmitError,
    IRError,
    PassError,
    PlanError,
    QuantizeError,
    ShapeInferenceError,
    ShapeMismatchError,
    UnsupportedDTypeError,
    VerifyError,
)
from stack.compiler.evaluate import evaluator_for
from stack.compiler.ir import (
    VIEW_OPS,
    AttrValue,
    ElemType,
    Graph,
    Node,
    OpType,
    TensorType,
    freeze_array,
)
from stack.compiler.options import CompileOptions, QuantizeOptions
from stack.compiler.passes import known_passes
from stack.compiler.shape_rules import conv_out, rule_for
from stack.compiler.verify import mismatch_report, verify

if TYPE_CHECKING:
    from stack.compiler.driver import CompileResult, compile_graph
    from stack.compiler.jit import CompiledModel

_LAZY = {
    "CompileResult": "stack.compiler.driver",
    "compile_graph": "stack.compiler.driver",
    "CompiledModel": "stack.compiler.jit",
}


def __getattr__(name: str) -> Any:
    """Load the emitting half (which pulls in the runtime) only when it is first used."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'stack.compiler' has no attribute {name!r}")


__all__ = [
    "VIEW_OPS",
    "AttrValue",
    "CompileOptions",
    "CompileResult",
    "CompiledModel",
    "ElemType",
    "EmitError",
    "Graph",
    "IRError",
    "Node",
    "OpType",
    "PassError",
    "PlanError",
    "QuantizeError",
    "QuantizeOptions",
    "ShapeInferenceError",
    "ShapeMismatchError",
    "TensorType",
    "UnsupportedDTypeError",
    "VerifyError",
    "compile_graph",
    "conv_out",
    "evaluator_for",
    "freeze_array",
    "known_passes",
    "mismatch_report",
    "rule_for",
    "verify",
]
