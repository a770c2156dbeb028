"""The Impact page and ``/api/impact``: what must change with a symbol, an interface, a
contract entry, a ``PATH:LINE``, a revision range or a pasted patch, per layer, each item with its
explanation path hop by hop (:mod:`mapper.impact` through :meth:`web.data.MapData.impact`)."""

from __future__ import annotations

from typing import Any

from web.data import MapData
from web.errors import BadRequest

MAX_TARGET = 300


def impact(
    data: MapData,
    target: str = "",
    diff: str = "",
    conservative: bool = False,
    patch: str = "",
) -> dict[str, Any]:
    target, diff = target.strip(), diff.strip()
    if sum(bool(x) for x in (target, diff, patch.strip())) != 1:
        raise BadRequest(
            "give one of a target (e.g. interface:umd_kmd.free, stack/kmd/memory.py:40), "
            "a diff (a revision range such as HEAD~3..HEAD) or a pasted patch"
        )
    for value in (target, diff):
        if len(value) > MAX_TARGET:
            raise BadRequest(f"a target is at most {MAX_TARGET} characters", length=len(value))
    report = data.impact(
        target or None, diff or None, patch=patch or None, conservative=conservative
    )
    items = {a["node"]: a for a in report["affected"]}
    order = [layer["id"] for layer in data.layers()] + ["(no layer)"]
    by_layer = report["by_layer"]
    report["layers"] = [
        {"layer": k, "items": [items[n] for n in by_layer[k]]} for k in order if k in by_layer
    ]
    for key in ("tests", "docs", "contracts", "scenario_steps"):
        report[key] = [items[n] for n in report[key]]
    report["count"] = len(report["affected"])
    return report
