"""The reference stack's exception tree: one root, one subclass per layer.

Every error carries structured fields so that a caller (or the map tool reading a log) can tell
*where* a failure arose without parsing the message: the ``layer`` that raised it, and where
they apply the ``op`` being processed, the ``node`` of the graph, a ``path`` and a ``line``.
Errors from outside libraries (CuPy, onnx, grpc) are converted once, at the layer boundary that
calls them, into one of these.
"""

from __future__ import annotations

from typing import Any


class StackError(Exception):
    """Root of every error the reference stack raises on purpose."""

    layer: str = "stack"

    def __init__(
        self,
        message: str,
        *,
        op: str | None = None,
        node: str | None = None,
        path: str | None = None,
        line: int | None = None,
        **details: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.op = op
        self.node = node
        self.path = path
        self.line = line
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        """The error as a JSON-ready record (for ``--json`` output and gRPC status details)."""
        record: dict[str, Any] = {
            "error": type(self).__name__,
            "layer": self.layer,
            "message": self.message,
        }
        for key in ("op", "node", "path", "line"):
            value = getattr(self, key)
            if value is not None:
                record[key] = value
        record.update({k: v for k, v in self.details.items() if v is not None})
        return record

    def __str__(self) -> str:
        where = [f"{k}={getattr(self, k)}" for k in ("op", "node") if getattr(self, k)]
        if self.path:
            where.append(f"{self.path}:{self.line}" if self.line is not None else self.path)
        return f"[{self.layer}] {self.message}" + (f" ({', '.join(where)})" if where else "")


class AdapterError(StackError):
    """Framework import failed: unsupported op, malformed model, bad attribute."""

    layer = "adapter"


class CompilerError(StackError):
    """IR verification, a pass, memory planning or Executable emission failed."""

    layer = "compiler"


class RuntimeLayerError(StackError):
    """Loading, scheduling or executing an Executable failed (named to avoid ``RuntimeError``)."""

    layer = "runtime"


class UmdError(StackError):
    """Translation, session or service failure in the user-mode driver."""

    layer = "umd"


class KmdError(StackError):
    """An ioctl was refused or a submitted command failed in the kernel-mode driver shim."""

    layer = "kmd"
