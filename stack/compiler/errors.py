"""The compiler's error tree: every failure is a :class:`~stack.errors.CompilerError` subclass.

Each carries structured fields (``op``, ``node`` and kind-specific details such as ``value``,
``expected``, ``got``, ``dtype``) so that callers and the map tool can tell where it arose.
"""

from __future__ import annotations

from stack.errors import CompilerError


class IRError(CompilerError):
    """A graph is malformed: unknown op, bad attribute, a value used before it is produced."""


class VerifyError(IRError):
    """The verifier found an inconsistency between passes (``check`` names the failed rule)."""


class ShapeMismatchError(VerifyError):
    """A recorded shape or dtype disagrees with what the producing op yields.

    Like a linker refusing to connect ports of different shapes, the report names the value,
    the producing node, the expected and the actual type and every differing dimension.
    """


class ShapeInferenceError(IRError):
    """Shapes cannot be inferred statically (unknown input dims, a data-dependent shape)."""


class UnsupportedDTypeError(CompilerError):
    """A tensor's element type has no device DType (the KMD and UMD would need it first)."""


class PassError(CompilerError):
    """A pass failed or is unknown (``pass_name`` names it)."""


class PlanError(CompilerError):
    """The memory planner could not place a tensor, or a plan check failed."""


class EmitError(CompilerError):
    """An IR op has no Executable lowering, or the Executable failed validation."""


class QuantizeError(CompilerError):
    """Post-training quantization failed (no calibration data, unsupported pattern)."""
