"""What a pipeline needs to know of an operator module: resolution, version rule, precision.

:func:`resolve_operator` finds the operator a stage names (by descriptor or kernel name,
optionally within one module) and applies the version rule to the version the config was
written for: a different major is refused, a different minor is logged as a warning, a patch
difference is silent. :func:`resolve_precision` says which dtype a precision policy runs at on
a device, or None when the device cannot satisfy it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from stack.runtime.errors import PipelineConfigError
from stack.umd import DType, OpKind

log = logging.getLogger("stack.runtime.oppipeline")

BUILTIN_MODULE = "builtin"
BUILTIN_VERSION = "1.0.0"
ALL_POLICIES = ("fp32", "fp16", "bf16", "fp64", "int8", "fp16_if_supported_else_fp32")

#: Precision features each kernel backend declares (the NumPy device computes f16 and f64 in
#: software, and has no bf16 type).
_DEVICE_PRECISIONS = {
    "numpy": frozenset({"fp32", "fp16", "fp64", "int8"}),
    "cupy": frozenset({"fp32", "fp16", "fp64", "int8"}),
}
_POLICY_DTYPE = {"fp32": DType.F32, "fp16": DType.F16, "fp64": DType.F64, "int8": DType.I8}


@dataclass(frozen=True, slots=True)
class OperatorInfo:
    """An operator as a pipeline stage runs it: which module and version, which UMD op, and
    its descriptor's numerics (``nan_inf_forbidden``) and precision policies."""

    name: str
    module: str
    version: str
    op: OpKind
    precision_policies: tuple[str, ...]
    nan_inf_forbidden: bool

    @property
    def qualified_name(self) -> str:
        return f"{self.module}/{self.name}@{self.version}"


def _builtin(op: OpKind) -> OperatorInfo:
    return OperatorInfo(op.name.lower(), BUILTIN_MODULE, BUILTIN_VERSION, op, ALL_POLICIES, False)


def resolve_operator(
    name: str, module: str | None, version: str | None, *, field: str
) -> OperatorInfo:
    """The operator ``name`` (a descriptor or kernel name, any case) of ``module`` (None: any),
    checked against ``version``. PipelineConfigError(field=...) names what is unknown and lists
    the known operators, or the major version mismatch."""
    if module not in (None, BUILTIN_MODULE):
        raise PipelineConfigError(
            f"{field}.module: no operator module {module!r}; known: {BUILTIN_MODULE}",
            field=f"{field}.module",
        )
    op = OpKind.__members__.get(name.upper())
    if op is None:
        known = ", ".join(k.name.lower() for k in OpKind)
        raise PipelineConfigError(
            f"{field}.operator: no operator {name!r}; known: {known}", field=f"{field}.operator"
        )
    info = _builtin(op)
    if version is not None:
        check_version(info, version, field=f"{field}.version")
    return info


def check_version(info: OperatorInfo, wanted: str, *, field: str) -> None:
    """Major differs: refused; minor differs: warning; patch differs: silent."""
    have = tuple(int(p) for p in info.version.split("."))
    want = tuple(int(p) for p in wanted.split("."))
    if have[0] != want[0]:
        raise PipelineConfigError(
            f"{field}: the config was written for {info.name} {wanted}, the module "
            f"{info.module} provides {info.version} (major versions differ)",
            field=field,
        )
    if have[1] != want[1]:
        log.warning(
            "%s: the config was written for %s %s, module %s provides %s (minor versions differ)",
            field, info.name, wanted, info.module, info.version,
        )  # fmt: skip


def resolve_precision(policy: str, backend: str) -> DType | None:
    """The dtype ``policy`` runs at on ``backend``, or None when the device cannot satisfy it."""
    have = _DEVICE_PRECISIONS.get(backend, frozenset({"fp32"}))
    if policy == "fp16_if_supported_else_fp32":
        return DType.F16 if "fp16" in have else DType.F32
    return _POLICY_DTYPE.get(policy) if policy in have else None


def device_precisions(backend: str) -> tuple[str, ...]:
    return tuple(sorted(_DEVICE_PRECISIONS.get(backend, frozenset({"fp32"}))))
