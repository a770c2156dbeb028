"""The ingest report: what was read, built, skipped and left unanswered, and how long it took."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mapper.material import Skip
from mapper.model import Hole


@dataclass(frozen=True, slots=True)
class IngestReport:
    root: str
    version: int
    files: dict[str, int]  # per category
    loc: int
    parsed: tuple[str, ...]  # files (re)parsed this run
    removed: tuple[str, ...]  # files gone since the previous version
    nodes: dict[str, int]
    edges: dict[str, int]
    holes: tuple[Hole, ...]
    skips: tuple[Skip, ...]
    warnings: tuple[str, ...]
    timings: dict[str, float]
    embedded: bool
    unmapped: int = 0
    index: dict[str, int] = field(default_factory=dict)  # chunks, embedded, upserted, deleted

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "version": self.version,
            "files": self.files,
            "loc": self.loc,
            "parsed": list(self.parsed),
            "removed": list(self.removed),
            "nodes": self.nodes,
            "edges": self.edges,
            "holes": [
                {
                    "node": h.node,
                    "missing": list(h.missing),
                    "reason": h.reason,
                    "location": str(h.location) if h.location else None,
                }
                for h in self.holes
            ],
            "skips": [{"path": s.path, "reason": s.reason} for s in self.skips],
            "warnings": list(self.warnings),
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
            "embedded": self.embedded,
            "unmapped_code_files": self.unmapped,
            "index": self.index,
        }

    def render(self) -> str:
        """Human-readable summary (the CLI prints it; ``--json`` prints :meth:`to_dict`)."""
        lines = [
            f"map version {self.version} of {self.root}: {sum(self.files.values())} files, "
            f"{self.loc} lines ({len(self.parsed)} parsed, {len(self.removed)} removed)",
            "nodes: " + ", ".join(f"{k} {v}" for k, v in self.nodes.items()),
            "edges: " + ", ".join(f"{k} {v}" for k, v in self.edges.items()),
        ]
        if self.index:
            lines.append("index: " + ", ".join(f"{k} {v}" for k, v in self.index.items()))
        lines.append(f"holes: {len(self.holes)}")
        lines += [f"  {h.node}: missing {', '.join(h.missing)} ({h.reason})" for h in self.holes]
        lines.append(f"skipped: {len(self.skips)}")
        lines += [f"  {s.path}: {s.reason}" for s in self.skips]
        if self.warnings:
            lines.append(f"warnings: {len(self.warnings)}")
            lines += [f"  {w}" for w in self.warnings]
        lines.append("timings: " + ", ".join(f"{k} {v:.3f}s" for k, v in self.timings.items()))
        return "\n".join(lines)
