"""Change impact: from a changed node, line, contract entry or diff to everything that must
change with it, the tests to rerun and the docs to update, each explained hop by hop.

Read the map only through :class:`~mapper.impact.mapview.MapView` (the query API's shape)."""

from __future__ import annotations

from mapper.impact.analyse import impact_of, impact_of_diff, impact_of_patch
from mapper.impact.mapview import MapView, open_view
from mapper.impact.patch import parse_patch
from mapper.impact.patch_types import (
    MalformedPatchError,
    PatchError,
    PatchLimits,
    PatchTooLargeError,
    UnsafePathError,
)
from mapper.impact.records import Affected, Category, Changed, Hop, ImpactReport, Mode, RankedFile
from mapper.impact.targets import (
    ImpactError,
    NoDefinitionError,
    NothingToAnalyseError,
    UnknownTargetError,
)

__all__ = [
    "Affected",
    "Category",
    "Changed",
    "Hop",
    "ImpactError",
    "ImpactReport",
    "MalformedPatchError",
    "MapView",
    "Mode",
    "NoDefinitionError",
    "NothingToAnalyseError",
    "PatchError",
    "PatchLimits",
    "PatchTooLargeError",
    "RankedFile",
    "UnknownTargetError",
    "UnsafePathError",
    "impact_of",
    "impact_of_diff",
    "impact_of_patch",
    "open_view",
    "parse_patch",
]
