"""What a pipeline needs to know of an operator module: resolution, version rule, precision.

The operator modules are the KMD's (:mod:`stack.umd.operators` re-exports their API; the UMD
reports which ones its device runs). :func:`resolve_operator` finds the descriptor a stage
names — by descriptor or kernel name, optionally within one module — checks that it is the
implementation the device actually runs for that kernel, and applies the version rule to the
version the config was written for: another major is refused, another minor is logged as a
warning (on ``stack.kmd.opmod``), another patch is silent. :func:`resolve_precision` says which
dtype a precision policy runs at on a device, or None when the device cannot satisfy it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from stack.errors import StackError
from stack.runtime.errors import PipelineConfigError
from stack.umd import DType, OpKind, operators


class OperatorSource(Protocol):
    """What the linker asks the UMD about operators (:class:`stack.umd.Umd` provides it)."""

    def capabilities(self) -> operators.DeviceCapabilities: ...

    def operator_modules(self) -> operators.ModuleRegistry: ...

    def selected_operator(self, kernel: str) -> operators.Descriptor: ...


@dataclass(frozen=True, slots=True)
class OperatorInfo:
    """An operator as a pipeline stage runs it: which module and version, which UMD op, and
    its descriptor's numerics (``nan_inf_forbidden``), precision policies and input dtypes."""

    name: str
    module: str
    version: str
    op: OpKind
    precision_policies: tuple[str, ...]
    nan_inf_forbidden: bool
    dtypes: frozenset[str]  # what its first input takes ("f32", "f16", ...)

    @property
    def qualified_name(self) -> str:
        return f"{self.module}/{self.name}@{self.version}"

    def offers(self, policy: str) -> bool:
        return policy in self.precision_policies or "any" in self.precision_policies


def _descriptor(
    source: OperatorSource, name: str, module: str | None, field: str
) -> operators.Descriptor:
    reg = source.operator_modules()
    if module is not None and module not in {m.name for m in reg.modules()}:
        try:
            reg.module(module)
        except operators.UnknownOperatorError as exc:
            raise PipelineConfigError(
                f"{field}.module: {exc.message}", field=f"{field}.module"
            ) from None
    try:
        return reg.descriptor(name, module=module)
    except operators.UnknownOperatorError as exc:
        if name.upper() in reg.kernels():  # a kernel named in lower case
            return reg.descriptor(name.upper(), module=module)
        raise PipelineConfigError(
            f"{field}.operator: {exc.message}", field=f"{field}.operator"
        ) from None


def resolve_operator(
    source: OperatorSource, name: str, module: str | None, version: str | None, *, field: str
) -> OperatorInfo:
    """The operator a stage names (see the module doc); PipelineConfigError(field=...) names
    what is unknown (listing the known names), not run by this device, or of another major."""
    desc = _descriptor(source, name, module, field)
    op = OpKind.__members__.get(desc.kernel)
    if op is None:
        raise PipelineConfigError(
            f"{field}.operator: {desc.qualified_name} implements kernel {desc.kernel}, which no "
            "UMD op requests directly",
            field=f"{field}.operator",
        )
    try:
        chosen = source.selected_operator(desc.kernel)
    except StackError as exc:
        raise PipelineConfigError(
            f"{field}.operator: {desc.qualified_name} cannot run on this device: {exc.message}",
            field=f"{field}.operator",
        ) from None
    if chosen.qualified_name != desc.qualified_name:
        raise PipelineConfigError(
            f"{field}.operator: the device runs {chosen.qualified_name} for kernel "
            f"{desc.kernel}, not {desc.qualified_name}",
            field=f"{field}.operator",
        )
    if version is not None:
        try:
            operators.check_version(
                f"{field}.version: stage for operator", desc.qualified_name,
                operators.SemVer.parse(version), desc.version,
            )  # fmt: skip
        except operators.VersionMismatchError as exc:
            raise PipelineConfigError(exc.message, field=f"{field}.version") from None
    first = (desc.inputs or desc.outputs)[0]
    return OperatorInfo(
        desc.name, desc.module, str(desc.version), op,
        tuple(p.value for p in desc.precision_policies),
        desc.nan_inf is operators.NanInf.FORBIDDEN, first.dtypes,
    )  # fmt: skip


def resolve_precision(policy: str, caps: operators.DeviceCapabilities) -> DType | None:
    """The dtype ``policy`` runs at on a device with ``caps`` (None: the device cannot, or the
    stack has no tensors of that type)."""
    resolved = operators.PrecisionPolicy(policy).resolve(caps.features)
    if resolved is None or resolved == "any":
        return None
    return DType.__members__.get(resolved.upper())


def device_precisions(caps: operators.DeviceCapabilities) -> tuple[str, ...]:
    """The precision policies (besides any) the device satisfies."""
    return tuple(
        p.value
        for p in operators.PrecisionPolicy
        if p is not operators.PrecisionPolicy.ANY and resolve_precision(p.value, caps) is not None
    )
