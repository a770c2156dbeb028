"""The web UI's one door to the map: every read of ``mapper`` goes through this module.

:class:`MapData` opens the current map of a repository (re-reading it when an ingest writes a
new version), and turns the map tool's records into plain, JSON-ready dicts for the pages and
the API. It only reads: nothing here writes to the repository or the store. Thread-safe: the
cached map and check report are swapped under a lock, and are read-only once built.

Backends: ``ask`` is :mod:`mapper.agent`, ``impact`` is :mod:`mapper.impact`, ``check`` is
:mod:`mapper.check` and role views are :mod:`mapper.roles`, each over the cached map.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mapper.config import StackmapConfig, load_config
from mapper.errors import ConfigError, MapperError, StoreError
from mapper.graph import MapGraph
from mapper.model import NodeKind, Provenance
from web.errors import BadRequest, ConfigProblem, EmptyMap, MapNotIngested, UnknownNode, UnknownRole

NODE_KINDS = tuple(k.value for k in NodeKind)
EVIDENCE_KINDS = tuple(p.value for p in Provenance)
#: Kinds the Map page shows when none are asked for (symbols, files, docs, tests are many).
DEFAULT_MAP_KINDS = ("layer", "component", "interface", "scenario")
EXCERPT_CONTEXT = 4  # lines either side of a cited line


class MapData:
    """The current map of ``root``, cached per store version."""

    def __init__(self, root: Path, config: StackmapConfig | None = None) -> None:
        self.root = root.resolve()
        self._lock = threading.Lock()
        self._graph: MapGraph | None = None
        self._stamp: tuple[int, int] | None = None
        self._empty = False
        self._derived: dict[str, Any] = {}  # per-version results (check report, role views)
        try:
            self.config: StackmapConfig = config or load_config(self.root)
        except ConfigError as exc:
            raise ConfigProblem(str(exc), command=f"stackmap init {self.root}") from exc

    # ------------------------------------------------------------------ the map itself
    @property
    def ingest_command(self) -> str:
        return f"stackmap ingest {self.root}"

    def graph(self) -> MapGraph:
        """The current graph; MapNotIngested with the command to run when there is none."""
        from mapper.ingest.store import Store

        try:
            path = Store(self.config.store_path).graph_path()
            stat = path.stat()
        except (OSError, StoreError):
            raise MapNotIngested(
                "no map has been built for this repository yet", command=self.ingest_command
            ) from None
        stamp = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if self._graph is None or stamp != self._stamp:
                try:
                    self._graph = MapGraph.load(path)
                except StoreError as exc:
                    raise MapNotIngested(str(exc), command=self.ingest_command) from exc
                self._stamp, self._derived = stamp, {}
                self._empty = all(k == "layer" for k in self._graph.counts()["nodes"])
            graph, empty = self._graph, self._empty
        if empty:
            raise EmptyMap(
                "the map holds no code, docs or contracts: the layers' paths in stackmap.toml "
                "match no files",
                command=f"stackmap ingest {self.root} --json",
            )
        return graph

    def cached(self, key: str, build: Any) -> Any:
        """``build()``'s result, computed once per map version under ``key``."""
        self.graph()
        with self._lock:
            if key in self._derived:
                return self._derived[key]
        value = build()
        with self._lock:
            self._derived.setdefault(key, value)
        return value

    def node_record(self, node_id: str) -> tuple[str, Mapping[str, Any]]:
        """(id, attributes) of a node, its kind prefix optional; UnknownNode with suggestions."""
        from mapper.search import resolve_id

        graph = self.graph()
        try:
            found = resolve_id(graph, node_id)
        except StoreError as exc:
            tail = node_id.rsplit(".", 1)[-1].rsplit(":", 1)[-1].lower()
            near = sorted(n for n in graph.nx if tail and n.lower().endswith(tail))[:10]
            raise UnknownNode(str(exc), node=node_id, suggestions=near or None) from None
        return found, graph.node(found)

    def layers(self) -> list[dict[str, str]]:
        return [
            {"id": layer.id, "name": layer.name, "description": layer.description}
            for layer in self.config.layers
        ]

    def roles(self) -> list[dict[str, Any]]:
        return [
            {"id": r.id, "name": r.name, "layers": list(r.layers), "interests": list(r.interests)}
            for r in self.config.roles
        ]

    def overview(self) -> dict[str, Any]:
        graph = self.graph()
        return {"name": self.config.name, "root": str(self.root), **graph.counts()}

    def nodes(
        self, kinds: set[str] | None = None, layers: set[str] | None = None
    ) -> list[tuple[str, Mapping[str, Any]]]:
        """(id, attributes) of the nodes of those kinds and layers (all when None)."""
        return [
            (n, d)
            for n, d in self.graph().nodes()
            if (kinds is None or d.get("kind") in kinds)
            and (layers is None or d.get("layer") in layers)
        ]

    def edges_among(self, ids: set[str], evidence: set[str] | None = None) -> list[dict[str, Any]]:
        """Edges whose both ends are in ``ids`` (and whose evidence is of those kinds)."""
        out = []
        for src, dst, _, edge in self.graph().raw_edges():
            if src in ids and dst in ids and (evidence is None or edge["provenance"] in evidence):
                out.append(_edge(src, dst, edge))
        return out

    def neighbours(self, node_id: str) -> dict[str, list[dict[str, Any]]]:
        """The edges out of and into ``node_id``, each with its evidence."""
        graph = self.graph()
        return {
            "out": sorted(
                (_edge(node_id, dst, e) for dst, e in graph.out_edges(node_id)),
                key=lambda e: (e["kind"], e["target"]),
            ),
            "in": sorted(
                (_edge(src, node_id, e) for src, e in graph.in_edges(node_id)),
                key=lambda e: (e["kind"], e["source"]),
            ),
        }

    # ------------------------------------------------------------------ check and roles
    def check(self) -> Any:
        """The check report (mapper.check.Report) for the current map version."""
        from mapper.check import run_check

        def build() -> Any:
            try:
                return run_check(self.root, config=self.config)
            except MapperError as exc:
                raise ConfigProblem(str(exc)) from exc

        return self.cached("check", build)

    def role(self, role_id: str, *, changes: bool = True) -> dict[str, Any]:
        from mapper.roles import find_role, role_view

        try:
            find_role(self.config, role_id)
        except MapperError:
            raise UnknownRole(
                f"no role {role_id!r} in stackmap.toml",
                known=[r.id for r in self.config.roles],
            ) from None
        findings = self.check().findings
        return dict(
            self.cached(
                f"role:{role_id}:{changes}",
                lambda: role_view(
                    self.root,
                    role_id,
                    self.graph(),
                    config=self.config,
                    findings=findings,
                    changes=changes,
                ).to_dict(),
            )
        )

    # ------------------------------------------------------------------ code excerpts
    def excerpt(self, path: str | None, line: int | None) -> dict[str, Any] | None:
        """Lines around ``path:line`` of a file inside the repository root.

        Callers pass paths the map or the agent recorded (never a path taken from a request);
        a path that resolves outside the root (``..``, a symlink) is refused all the same.
        """
        if not path or line is None:
            return None
        full = (self.root / path).resolve()
        if not full.is_relative_to(self.root) or not full.is_file():
            return None
        try:
            lines = full.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return None
        start = max(1, line - EXCERPT_CONTEXT)
        end = min(len(lines), line + EXCERPT_CONTEXT)
        return {
            "path": path,
            "line": line,
            "start": start,
            "lines": [
                {"n": n, "text": lines[n - 1], "hit": n == line} for n in range(start, end + 1)
            ],
        }

    # ------------------------------------------------------------------ ask and impact
    def ask(self, question: str, role: str | None = None) -> dict[str, Any]:
        """``mapper.agent.ask`` on the cached map: the answer, its intent and citations."""
        from mapper.agent import AskError, ask
        from mapper.agent.mapview import MapView as AgentView
        from mapper.errors import UnknownNameError

        view = self.cached("agent-view", lambda: AgentView(self.root, self.config, self.graph()))
        try:
            answer = ask(question, role=role, map=view)
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
        self, target: str | None, diff: str | None, *, conservative: bool = False
    ) -> dict[str, Any]:
        """``mapper.impact``'s report (JSON form) for a target, or for a revision range
        ``A..B`` / ``A`` (to HEAD); UnknownNode or BadRequest when it cannot be analysed."""
        from mapper.impact import (
            ImpactError,
            MapView,
            Mode,
            UnknownTargetError,
            impact_of,
            impact_of_diff,
        )

        view = self.cached("impact-view", lambda: MapView(self.graph(), self.config))
        mode = Mode.CONSERVATIVE if conservative else Mode.PRECISE
        try:
            if diff is not None:
                report = impact_of_diff(view, self.root, diff, mode=mode)
            else:
                report = impact_of(view, self.root, str(target), mode=mode)
        except UnknownTargetError as exc:
            raise UnknownNode(str(exc), node=target) from None
        except (ImpactError, MapperError) as exc:
            raise BadRequest(str(exc)) from None
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


def _edge(src: str, dst: str, edge: Mapping[str, Any]) -> dict[str, Any]:
    """An edge as the UI shows it: its ends, its kind and the evidence behind it."""
    return {
        "source": src,
        "target": dst,
        "kind": edge["kind"],
        "evidence": [
            {
                "kind": edge["provenance"],
                "path": edge.get("path"),
                "line": edge.get("line"),
                "confidence": edge.get("confidence", 1.0),
            }
        ],
    }
