"""Errors of operator modules: descriptors, versions, discovery and selection.

All are :class:`stack.errors.KmdError` subclasses rooted in :class:`OperatorModuleError`, raised
synchronously by the call that was refused; none leaves a registry half-updated.
"""

from __future__ import annotations

from typing import Any

from stack.errors import KmdError


class OperatorModuleError(KmdError):
    """Root of the operator-module errors."""


class DescriptorError(OperatorModuleError):
    """A descriptor that is unreadable or violates the published schema. ``pointer`` is the JSON
    pointer of the offending value ("" for the document), ``path`` the file (or "<data>")."""

    def __init__(self, message: str, *, path: str, pointer: str = "", **details: Any) -> None:
        super().__init__(message, path=path, pointer=pointer, **details)
        self.pointer = pointer


class UnknownOperatorError(OperatorModuleError):
    """No module, descriptor or kernel of that name; ``known`` lists the names there are."""

    def __init__(self, message: str, *, name: str, known: tuple[str, ...], **details: Any):
        super().__init__(message, name=name, known=known, **details)
        self.name = name
        self.known = known


class UnsupportedOperatorError(OperatorModuleError):
    """No candidate for ``op`` runs on ``device`` (and no CPU fallback was allowed).
    ``missing`` names the hardware features the candidates lacked; ``skipped`` is each
    candidate with the reason it was passed over."""

    def __init__(
        self,
        message: str,
        *,
        op: str,
        device: str,
        missing: tuple[str, ...],
        skipped: tuple[tuple[str, str], ...],
    ) -> None:
        super().__init__(message, op=op, device=device, missing=missing, skipped=skipped)
        self.device = device
        self.missing = missing
        self.skipped = skipped


class VersionMismatchError(OperatorModuleError):
    """A major version other than the one supported: refused (``kind`` is module, descriptor,
    executable or contract)."""

    def __init__(self, message: str, *, kind: str, name: str, found: str, supported: str):
        super().__init__(message, kind=kind, name=name, found=found, supported=supported)
        self.kind = kind
        self.name = name
        self.found = found
        self.supported = supported


class ModuleLoadError(OperatorModuleError):
    """Why a plug-in module was not loaded (recorded and logged by discovery, not raised)."""

    def __init__(self, message: str, *, module: str, reason: str) -> None:
        super().__init__(message, module=module, reason=reason)
        self.module = module
        self.reason = reason
