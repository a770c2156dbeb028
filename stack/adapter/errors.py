"""The adapter's error tree: every failure is an :class:`~stack.errors.AdapterError` subclass."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stack.errors import AdapterError

#: Where support for a brand-new operator would have to be added, top to bottom.
ALL_LAYERS: tuple[str, ...] = ("adapter", "compiler", "umd", "kmd")


class ModelFormatError(AdapterError):
    """The model file is unreadable or malformed (bad protobuf, missing graph, dynamic dims)."""


class UnsupportedOpError(AdapterError):
    """An operator (or a feature of one) the stack cannot run.

    Carries ``op_type``, the ONNX ``node`` name, ``layers`` (where support would have to be
    added) and a ``reason``; ``str(err)`` reads as one actionable sentence.
    """

    def __init__(
        self,
        op_type: str,
        node: str,
        *,
        reason: str = "no importer for this operator",
        layers: Sequence[str] = ALL_LAYERS,
        **details: Any,
    ) -> None:
        super().__init__(
            f"unsupported ONNX op {op_type} at node {node!r}: {reason}; "
            f"support would have to be added in: {', '.join(layers)}",
            op=op_type,
            node=node,
            op_type=op_type,
            layers=list(layers),
            reason=reason,
            **details,
        )
        self.op_type = op_type
        self.layers = tuple(layers)
        self.reason = reason


class DynamicShapeError(UnsupportedOpError):
    """A tensor whose *values* decide a shape or an attribute (Reshape's ``shape``, Slice's
    ``starts``, TopK's ``k``...) is only known at run time; shapes here are static. ``tensor``
    names it (bind it as a constant, or fold what computes it)."""

    def __init__(self, op_type: str, node: str, tensor: str, role: str) -> None:
        super().__init__(
            op_type,
            node,
            reason=f"its {role} {tensor!r} is only known at run time and decides a shape "
            "(shapes are static: bind it as a constant)",
            layers=("adapter",),
            tensor=tensor,
        )
        self.tensor = tensor


class UnsupportedTypeError(AdapterError):
    """A tensor element type with no IR equivalent (float8, int4, strings, sequences...)."""
