"""The records of :mod:`mapper.ingest.bindings`: how one node binds to another in driver code,
and the graph edge each kind of binding becomes."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from mapper.model import EdgeKind, EvidenceKind, Location


class BindingKind(enum.StrEnum):
    IOCTL_USE = "ioctl_use"  # using function → ioctl
    IOCTL_DISPATCH = "ioctl_dispatch"  # dispatching function or handler → ioctl
    IOCTL_MIRROR = "ioctl_mirror"  # Python mirror constant → C ioctl
    SLOT_BIND = "slot_bind"  # function → the slot it fills
    SLOT_CALL = "slot_call"  # caller → the slot it calls through
    OVERRIDE = "override"  # derived method → base method
    IOCTL_ROUTE = "ioctl_route"  # using function → a function the kernel dispatches it to
    SLOT_ROUTE = "slot_route"  # caller through a slot → a function bound to that slot
    IOCTL_ARG = "ioctl_arg"  # ioctl → its argument struct
    INHERIT = "inherit"  # C++ class → its base class
    ENUM_CASE = "enum_case"  # switching function → the enumerator a ``case`` label names
    ENUM_USE = "enum_use"  # function → an enumerator it assigns, initialises from or passes


@dataclass(frozen=True, slots=True)
class Binding:
    kind: BindingKind
    source: str  # node id
    target: str  # node id
    location: Location
    name: str  # the ioctl, slot or method name as written at the location


#: the edge each binding becomes, how sure, and what kind of evidence it is
EDGES: Mapping[BindingKind, tuple[EdgeKind, float, EvidenceKind]] = {
    BindingKind.IOCTL_USE: (EdgeKind.CALLS, 1.0, EvidenceKind.CODE_REFERENCE),
    BindingKind.IOCTL_DISPATCH: (EdgeKind.IMPLEMENTS, 1.0, EvidenceKind.REGISTRATION),
    BindingKind.IOCTL_MIRROR: (EdgeKind.REFERENCES, 0.9, EvidenceKind.CODE_REFERENCE),
    BindingKind.IOCTL_ARG: (EdgeKind.REFERENCES, 1.0, EvidenceKind.CODE_REFERENCE),
    BindingKind.SLOT_BIND: (EdgeKind.OVERRIDES, 1.0, EvidenceKind.REGISTRATION),
    BindingKind.SLOT_CALL: (EdgeKind.CALLS, 0.8, EvidenceKind.CODE_REFERENCE),
    BindingKind.OVERRIDE: (EdgeKind.OVERRIDES, 1.0, EvidenceKind.INHERITANCE),
    BindingKind.INHERIT: (EdgeKind.INHERITS, 1.0, EvidenceKind.INHERITANCE),
    BindingKind.ENUM_CASE: (EdgeKind.REFERENCES, 1.0, EvidenceKind.CODE_REFERENCE),
    BindingKind.ENUM_USE: (EdgeKind.REFERENCES, 1.0, EvidenceKind.CODE_REFERENCE),
    BindingKind.IOCTL_ROUTE: (EdgeKind.CALLS, 0.9, EvidenceKind.CODE_REFERENCE),
    BindingKind.SLOT_ROUTE: (EdgeKind.CALLS, 0.7, EvidenceKind.CODE_REFERENCE),
}
