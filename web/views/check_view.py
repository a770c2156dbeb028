"""The Check page and ``/api/check``: the latest findings grouped by layer, rule and
classification (map stale: update the map; code wrong: fix the code)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from web.data import MapData


def check_summary(data: MapData) -> dict[str, Any]:
    report = data.check()
    findings = [f.to_dict() for f in report.findings]
    rules = {r.id: r for r in report.rules}

    def grouped(key: str) -> list[dict[str, Any]]:
        groups: dict[str, list[dict[str, Any]]] = {}
        for f in findings:
            groups.setdefault(str(f[key] or "(no layer)"), []).append(f)
        return [{"key": k, "count": len(v), "findings": v} for k, v in groups.items()]

    by_layer = grouped("layer")
    order = {layer["id"]: i for i, layer in enumerate(data.layers())}
    by_layer.sort(key=lambda g: (order.get(g["key"], len(order)), g["key"]))
    by_rule = sorted(grouped("rule"), key=lambda g: g["key"])
    for group in by_rule:
        info = rules.get(group["key"])
        group["name"] = info.name if info else group["key"]
        group["summary"] = info.summary if info else ""
    return {
        "counts": report.counts(),
        "total": len(findings),
        "classification": dict(sorted(Counter(f["classification"] for f in findings).items())),
        "by_layer": by_layer,
        "by_rule": by_rule,
        "by_classification": sorted(grouped("classification"), key=lambda g: g["key"]),
        "waived": len(report.waived),
        "rules": [{"id": r.id, "name": r.name, "summary": r.summary} for r in report.rules],
        "duration_s": round(report.duration_s, 3),
    }
