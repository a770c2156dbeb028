"""Choosing the operator implementation a device runs.

Candidates are tried best first — higher ``priority``, then higher version, then module name.
A candidate is passed over (with its reason kept, and logged at INFO) when the device's backend
is not one it runs on, when the device lacks a feature it requires, or when it does not take the
requested dtype. The first one left is chosen. When none is left and the caller allows a CPU
fallback on a non-CPU device, the same choice is made for the NumPy device and marked
``fallback`` (logged at WARNING); otherwise :class:`UnsupportedOperatorError` names the op, the
device and the missing features.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from stack.kmd.opmod.capabilities import DeviceCapabilities, numpy_capabilities
from stack.kmd.opmod.descriptor import Descriptor
from stack.kmd.opmod.errors import UnsupportedOperatorError

log = logging.getLogger("stack.kmd.opmod")


@dataclass(frozen=True, slots=True)
class Selection:
    """The chosen descriptor, the backend it runs on, whether that is a CPU fallback, and the
    candidates passed over with their reasons."""

    descriptor: Descriptor
    backend: str
    fallback: bool
    skipped: tuple[tuple[str, str], ...]


def why_not(d: Descriptor, caps: DeviceCapabilities, dtype: str | None) -> str | None:
    """Why ``d`` cannot run on ``caps`` (None: it can)."""
    if caps.backend not in d.backends:
        return f"runs on {', '.join(sorted(d.backends))}, not {caps.backend}"
    missing = caps.missing(d.requires)
    if missing:
        return f"device lacks {', '.join(sorted(missing))}"
    first = (d.inputs or d.outputs)[0]
    if dtype is not None and dtype not in first.dtypes:
        return f"takes {', '.join(sorted(first.dtypes))}, not {dtype}"
    return None


def _rank(d: Descriptor) -> tuple[int, int, int, int, str]:
    return (-d.priority, -d.version.major, -d.version.minor, -d.version.patch, d.module)


def select_from(
    op: str,
    candidates: Sequence[Descriptor],
    caps: DeviceCapabilities,
    *,
    dtype: str | None = None,
    allow_cpu_fallback: bool = False,
) -> Selection:
    """See the module docstring."""
    ordered = sorted(candidates, key=_rank)
    skipped: list[tuple[str, str]] = []
    for d in ordered:
        reason = why_not(d, caps, dtype)
        if reason is None:
            return Selection(d, caps.backend, False, tuple(skipped))
        log.info("%s: %s skipped on %s: %s", op, d.qualified_name, caps.device, reason)
        skipped.append((d.qualified_name, reason))
    if allow_cpu_fallback and not caps.cpu:
        cpu = numpy_capabilities()
        for d in ordered:
            if why_not(d, cpu, dtype) is None:
                log.warning("%s: no candidate runs on %s; CPU fallback %s", op, caps.device,
                            d.qualified_name)  # fmt: skip
                return Selection(d, cpu.backend, True, tuple(skipped))
    missing = sorted({f.value for d in ordered for f in caps.missing(d.requires)})
    detail = "; ".join(f"{name}: {why}" for name, why in skipped)
    raise UnsupportedOperatorError(
        f"no implementation of {op} runs on {caps.device}"
        + (f" (missing features: {', '.join(missing)})" if missing else "")
        + (f"; {detail}" if detail else "")
        + ("" if allow_cpu_fallback else "; CPU fallback not allowed"),
        op=op,
        device=caps.device,
        missing=tuple(missing),
        skipped=tuple(skipped),
    )
