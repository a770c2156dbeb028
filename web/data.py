"""The web UI's one door to the map: every read of ``mapper`` goes through this module.

:class:`MapData` opens the current map of a repository with the query API
(:func:`mapper.query.open_map`, re-read when an ingest writes a new version) and turns the map
tool's records into plain, JSON-ready dicts for the pages and the API (the converters and code
excerpts are :mod:`web.records`, which only this module uses). Backends: ``ask`` is
:mod:`mapper.agent`, ``impact`` is :mod:`mapper.impact`, the check is :mod:`mapper.check` and
role views are :mod:`mapper.roles`, each over the same map version. It only reads: nothing
here writes to the repository or the store. Thread-safe: per-version results are swapped
under a lock and are read-only once built.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mapper.config import StackmapConfig, load_config
from mapper.errors import ConfigError, MapperError, StoreError, UnknownNameError
from mapper.model import EvidenceKind, NodeKind
from mapper.query import Map, open_map
from mapper.query import MapNotIngested as NotIngested
from web.errors import (
    BadRequest,
    ConfigProblem,
    EmptyMap,
    MapNotIngested,
    PayloadTooLarge,
    UnknownNode,
    UnknownRole,
)
from web.records import Record, edge_dict, file_excerpt, node_dict

NODE_KINDS = tuple(k.value for k in NodeKind)
EVIDENCE_KINDS = tuple(k.value for k in EvidenceKind)
#: Kinds the Map page shows when none are asked for (symbols, files, docs, tests are many).
DEFAULT_MAP_KINDS = ("layer", "component", "interface", "scenario")


class MapData:
    """The current map of ``root``, and what is derived from it, cached per map version."""

    def __init__(self, root: Path, config: StackmapConfig | None = None) -> None:
        self.root = root.resolve()
        self._lock = threading.Lock()
        self._map: Map | None = None
        self._derived: dict[str, Any] = {}
        try:
            self.config: StackmapConfig = config or load_config(self.root)
        except ConfigError as exc:
            raise ConfigProblem(str(exc), command=f"stackmap init {self.root}") from exc

    @property
    def ingest_command(self) -> str:
        return f"stackmap ingest {self.root}"

    # ------------------------------------------------------------------ the map itself
    def map(self) -> Map:
        """The current map; MapNotIngested (with the command to run) when there is none or it
        cannot be read, EmptyMap when the layers match no files."""
        try:
            m = open_map(self.root, self.config)
        except NotIngested:
            raise MapNotIngested(
                "no map has been built for this repository yet", command=self.ingest_command
            ) from None
        except StoreError as exc:  # outdated or damaged: the error names the rebuild command
            rebuild = exc.details.get("rebuild") or "stackmap ingest"
            raise MapNotIngested(str(exc), command=f"{rebuild} {self.root}") from None
        with self._lock:
            if m is not self._map:
                self._map, self._derived = m, {}
                self._derived["empty"] = all(n.kind is NodeKind.LAYER for n in m.nodes())
            empty = self._derived["empty"]
        if empty:
            raise EmptyMap(
                "the map holds no code, docs or contracts: the layers' paths in stackmap.toml "
                "match no files",
                command=f"stackmap ingest {self.root} --json",
            )
        return m

    def cached(self, key: str, build: Callable[[], Any]) -> Any:
        """``build()``'s result, computed once per map version under ``key``."""
        self.map()
        with self._lock:
            if key in self._derived:
                return self._derived[key]
        value = build()
        with self._lock:
            self._derived.setdefault(key, value)
            return self._derived[key]

    def node_record(self, node_id: str) -> tuple[str, Record]:
        """(id, attributes) of a node, its kind prefix optional; UnknownNode with suggestions."""
        m = self.map()
        try:
            found = m.resolve(node_id)
        except StoreError as exc:
            tail = node_id.rsplit(".", 1)[-1].rsplit(":", 1)[-1].lower()
            near = sorted(n.id for n in m.nodes() if tail and n.id.lower().endswith(tail))
            raise UnknownNode(str(exc), node=node_id, suggestions=near[:10] or None) from None
        node = m.node(found)
        assert node is not None
        return found, node_dict(node)

    def nodes(self, kinds: set[str] | None = None, layers: set[str] | None = None) -> list[Any]:
        """(id, attributes) of the nodes of those kinds and layers (all when None)."""
        return [
            (n.id, node_dict(n))
            for n in self.map().nodes()
            if (kinds is None or n.kind.value in kinds) and (layers is None or n.layer in layers)
        ]

    def edges_among(self, ids: set[str], evidence: set[str] | None = None) -> list[Record]:
        """Edges whose both ends are in ``ids``, keeping only evidence of those kinds (and
        dropping edges left with none) when ``evidence`` is given."""
        out = []
        for edge in self.map().edges():
            if edge.source not in ids or edge.target not in ids:
                continue
            record = edge_dict(edge)
            if evidence is not None:
                record["evidence"] = [e for e in record["evidence"] if e["kind"] in evidence]
                if not record["evidence"]:
                    continue
            out.append(record)
        return out

    def neighbours(self, node_id: str) -> dict[str, list[Record]]:
        """The edges out of and into ``node_id``, each with its evidence."""
        m = self.map()
        out = [edge_dict(e) for e in m.neighbours(node_id, direction="out")]
        into = [edge_dict(e) for e in m.neighbours(node_id, direction="in")]
        return {
            "out": sorted(out, key=lambda e: (e["kind"], e["target"])),
            "in": sorted(into, key=lambda e: (e["kind"], e["source"])),
        }

    def layers(self) -> list[dict[str, str]]:
        return [
            {"id": layer.id, "name": layer.name, "description": layer.description}
            for layer in self.config.layers
        ]

    def roles(self) -> list[Record]:
        return [
            {"id": r.id, "name": r.name, "layers": list(r.layers), "interests": list(r.interests)}
            for r in self.config.roles
        ]

    def overview(self) -> Record:
        m = self.map()
        nodes = Counter(n.kind.value for n in m.nodes())
        edges = Counter(e.kind.value for e in m.edges())
        return {
            "name": self.config.name,
            "root": str(self.root),
            "version": m.version,
            "nodes": dict(sorted(nodes.items())),
            "edges": dict(sorted(edges.items())),
        }

    # ------------------------------------------------------------------ check and roles
    def check(self) -> Any:
        """The check report (:class:`mapper.check.Report`) for the current map version."""
        from mapper.check import run_check

        def build() -> Any:
            try:
                return run_check(self.root, config=self.config)
            except MapperError as exc:
                raise ConfigProblem(str(exc)) from exc

        return self.cached("check", build)

    def node_findings(self, node_id: str) -> list[Record]:
        return [f.to_dict() for f in self.map().findings(node_id)]

    def role(self, role_id: str, *, changes: bool = True) -> Record:
        from mapper.roles import find_role, role_view

        try:
            find_role(self.config, role_id)
        except MapperError:
            raise UnknownRole(
                f"no role {role_id!r} in stackmap.toml", known=[r.id for r in self.config.roles]
            ) from None
        findings = self.check().findings
        m = self.map()
        return dict(
            self.cached(
                f"role:{role_id}:{changes}",
                lambda: role_view(
                    self.root, role_id, m, findings=findings, changes=changes
                ).to_dict(),
            )
        )

    # ------------------------------------------------------------------ code excerpts
    def excerpt(self, path: str | None, line: int | None) -> Record | None:
        """Lines around ``path:line``: of the file as the map holds it, so that they agree
        with the map's line numbers, else of the file inside the repository root (see
        :func:`web.records.file_excerpt`: a path resolving outside the root is refused)."""
        text = self.map().source(path) if path else None
        return file_excerpt(self.root, path, line, text)

    # ------------------------------------------------------------------ ask and impact
    def ask(self, question: str, role: str | None = None) -> Record:
        """``mapper.agent.ask`` on the current map: the answer, its intent and citations."""
        from mapper.agent import AskError, ask
        from mapper.agent.mapview import open_view

        self.map()
        try:
            answer = ask(question, role=role, map=open_view(self.root, self.config))
        except AskError as exc:
            raise BadRequest(str(exc)) from None
        except UnknownNameError:
            raise UnknownRole(
                f"no role {role!r} in stackmap.toml", known=[r.id for r in self.config.roles]
            ) from None
        except StoreError as exc:
            raise MapNotIngested(str(exc), command=self.ingest_command) from exc
        return dict(answer.to_json())

    def impact(
        self,
        target: str | None,
        diff: str | None,
        *,
        patch: str | None = None,
        conservative: bool = False,
    ) -> Record:
        """``mapper.impact``'s report (JSON form) for a target, a revision range ``A..B`` /
        ``A`` (to HEAD) or a pasted patch; UnknownNode, BadRequest or PayloadTooLarge when it
        cannot be analysed."""
        from mapper.impact import (
            ImpactError,
            Mode,
            PatchTooLargeError,
            UnknownTargetError,
            impact_of,
            impact_of_diff,
            impact_of_patch,
        )
        from mapper.impact.mapview import open_view

        view = self.cached("impact-view", lambda: open_view(self.root, self.config))
        mode = Mode.CONSERVATIVE if conservative else Mode.PRECISE
        try:
            if patch is not None:
                report = impact_of_patch(view, self.root, patch, mode=mode)
            elif diff is not None:
                report = impact_of_diff(view, self.root, diff, mode=mode)
            else:
                report = impact_of(view, self.root, str(target), mode=mode)
        except UnknownTargetError as exc:
            raise UnknownNode(str(exc), node=target) from None
        except PatchTooLargeError as exc:
            raise PayloadTooLarge(str(exc), **exc.details) from None
        except (ImpactError, MapperError) as exc:
            raise BadRequest(str(exc), line=exc.line) from None
        return dict(report.to_json())

    def check_names(self, kinds: list[str], layers: list[str], evidence: list[str]) -> None:
        """BadRequest naming the known values for any unknown kind, layer or evidence kind."""
        known_layers = [layer.id for layer in self.config.layers]
        for asked, known, what in (
            (kinds, NODE_KINDS, "node kind"),
            (layers, known_layers, "layer"),
            (evidence, EVIDENCE_KINDS, "evidence kind"),
        ):
            bad = [x for x in asked if x not in known]
            if bad:
                raise BadRequest(f"unknown {what} {bad[0]!r}", known=list(known))
