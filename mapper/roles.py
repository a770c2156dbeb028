"""Role views: the map as one kind of engineer sees it (seed 003 §7).

A role (``[[roles]]`` in ``stackmap.toml``) names the layers an engineer works in. Its view
holds those layers; the interfaces at their boundaries with who provides and who consumes
each (and on which evidence); the scenarios that cross them; the open check findings and
holes there; and the recent breaking interface changes that touch them (``stackmap diff``
from ``since`` to HEAD). :func:`role_view` is synchronous and read-only; the same record
feeds ``stackmap role`` and the web UI.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mapper.check.finding import Finding
from mapper.config import RoleConfig, StackmapConfig, load_config
from mapper.errors import MapperError, UnknownNameError
from mapper.graph import MapGraph
from mapper.model import EdgeKind, NodeKind

#: How many commits back "recent" changes reach when no ``since`` revision is given.
RECENT_COMMITS = 20


@dataclass(frozen=True, slots=True)
class Party:
    """One end of an interface: a provider or a consumer, with the evidence that says so."""

    id: str
    kind: str
    layer: str | None
    evidence: str  # provenance of the edge: contract, tree-sitter, doc, ...
    path: str | None
    line: int | None


@dataclass(frozen=True, slots=True)
class BoundaryInterface:
    id: str
    name: str
    upper: str | None
    lower: str | None
    sync: str | None
    synchronization: str | None
    description: str | None
    path: str | None
    line: int | None
    providers: tuple[Party, ...]
    consumers: tuple[Party, ...]


@dataclass(frozen=True, slots=True)
class ScenarioStepView:
    order: int
    target: str
    action: str
    layer: str | None
    in_role: bool


@dataclass(frozen=True, slots=True)
class ScenarioCrossing:
    id: str
    name: str
    path: str | None
    steps: tuple[ScenarioStepView, ...]


@dataclass(frozen=True, slots=True)
class HoleView:
    node: str
    layer: str | None
    missing: tuple[str, ...]
    reason: str
    path: str | None
    line: int | None


@dataclass(frozen=True, slots=True)
class LayerView:
    id: str
    name: str
    description: str
    components: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RoleView:
    """Everything one role looks at; ``changes_error`` says why changes could not be listed."""

    role: RoleConfig
    layers: tuple[LayerView, ...]
    interfaces: tuple[BoundaryInterface, ...]
    scenarios: tuple[ScenarioCrossing, ...]
    findings: tuple[Finding, ...]
    holes: tuple[HoleView, ...]
    changes: tuple[dict[str, str], ...]  # breaking changes, as Change.to_dict() with "layer"
    changes_since: str | None
    changes_error: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": asdict(self.role),
            "layers": [asdict(x) for x in self.layers],
            "interfaces": [asdict(x) for x in self.interfaces],
            "scenarios": [asdict(x) for x in self.scenarios],
            "findings": [f.to_dict() for f in self.findings],
            "holes": [asdict(x) for x in self.holes],
            "changes": list(self.changes),
            "changes_since": self.changes_since,
            "changes_error": self.changes_error,
        }


def find_role(config: StackmapConfig, role_id: str) -> RoleConfig:
    """The role named ``role_id``; UnknownNameError listing the configured roles."""
    for role in config.roles:
        if role.id == role_id:
            return role
    raise UnknownNameError("role", role_id, [r.id for r in config.roles])


def _layer_of(graph: MapGraph, node_id: str) -> str | None:
    data = graph.get(node_id)
    return None if data is None else data.get("layer")


def _parties(graph: MapGraph, iface: str, kinds: tuple[EdgeKind, ...]) -> tuple[Party, ...]:
    out = []
    for kind in kinds:
        for src, edge in graph.in_edges(iface, kind):
            data = graph.node(src)
            out.append(
                Party(
                    src,
                    str(data.get("kind")),
                    data.get("layer"),
                    str(edge.get("provenance")),
                    edge.get("path"),
                    edge.get("line"),
                )
            )
    return tuple(sorted(out, key=lambda p: (p.kind != "layer", p.id)))


def _interfaces(graph: MapGraph, layers: frozenset[str]) -> tuple[BoundaryInterface, ...]:
    out = []
    for node_id, d in graph.nodes(NodeKind.INTERFACE):
        if d.get("upper") not in layers and d.get("lower") not in layers:
            continue
        out.append(
            BoundaryInterface(
                node_id,
                str(d.get("name")),
                d.get("upper"),
                d.get("lower"),
                d.get("sync"),
                d.get("synchronization"),
                d.get("description"),
                d.get("path"),
                d.get("line"),
                providers=_parties(graph, node_id, (EdgeKind.PROVIDES, EdgeKind.IMPLEMENTS)),
                consumers=_parties(graph, node_id, (EdgeKind.CONSUMES,)),
            )
        )
    return tuple(sorted(out, key=lambda i: i.id))


def _step_layers(graph: MapGraph, target: str) -> set[str]:
    data: Mapping[str, Any] = graph.get(target) or {}
    if data.get("kind") == NodeKind.INTERFACE.value:
        return {x for x in (data.get("upper"), data.get("lower")) if x}
    return {data["layer"]} if data.get("layer") else set()


def _scenarios(graph: MapGraph, layers: frozenset[str]) -> tuple[ScenarioCrossing, ...]:
    out = []
    for node_id, d in graph.nodes(NodeKind.SCENARIO):
        steps = []
        for step in sorted(d.get("steps") or [], key=lambda s: s.get("order", 0)):
            target = str(step.get("target"))
            touched = _step_layers(graph, target)
            steps.append(
                ScenarioStepView(
                    int(step.get("order", 0)),
                    target,
                    str(step.get("action", "")),
                    _layer_of(graph, target),
                    bool(touched & layers),
                )
            )
        if any(s.in_role for s in steps):
            out.append(ScenarioCrossing(node_id, str(d.get("name")), d.get("path"), tuple(steps)))
    return tuple(sorted(out, key=lambda s: s.id))


def _holes(graph: MapGraph, layers: frozenset[str]) -> tuple[HoleView, ...]:
    out = []
    for node_id, d in graph.nodes():
        hole = d.get("hole")
        if hole and (d.get("layer") in layers or d.get("layer") is None):
            out.append(
                HoleView(
                    node_id,
                    d.get("layer"),
                    tuple(hole.get("missing", ())),
                    str(hole.get("reason", "")),
                    d.get("path"),
                    d.get("line"),
                )
            )
    return tuple(sorted(out, key=lambda h: h.node))


def recent_base(root: Path, commits: int = RECENT_COMMITS) -> str:
    """The commit ``commits`` back from HEAD, or the oldest one a shallow history holds."""
    proc = subprocess.run(
        ["git", "-C", str(root), "rev-list", f"--max-count={commits + 1}", "HEAD"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    revs = proc.stdout.split()
    if proc.returncode != 0 or not revs:
        raise MapperError(f"no git history under {root}", path=str(root))
    return revs[-1]


def _changes(
    root: Path, graph: MapGraph, config: StackmapConfig, layers: frozenset[str], since: str | None
) -> tuple[tuple[dict[str, str], ...], str | None, str | None]:
    from mapper.versions import Impact, diff_revisions

    contract_layers: dict[str, set[str]] = {}
    for _, d in graph.nodes(NodeKind.INTERFACE):
        if d.get("path"):
            contract_layers.setdefault(d["path"], set()).update(
                x for x in (d.get("upper"), d.get("lower")) if x
            )
    try:
        base = since or recent_base(root)
        changes = diff_revisions(root, base, "HEAD")
    except MapperError as exc:
        return (), since, str(exc)
    out = []
    for change in changes:
        if change.impact is not Impact.BREAKING:
            continue
        path = change.location.path
        touched = contract_layers.get(path) or {config.layer_of(path)} - {None}
        hit = sorted(x for x in touched if x in layers)
        if hit:
            out.append({**change.to_dict(), "layer": ", ".join(hit)})
    return tuple(out), base, None


def role_view(
    root: Path,
    role_id: str,
    graph: MapGraph,
    *,
    config: StackmapConfig | None = None,
    findings: tuple[Finding, ...] | None = None,
    since: str | None = None,
    changes: bool = True,
) -> RoleView:
    """The view of ``role_id`` over ``graph`` (the current map of ``root``).

    ``findings`` are the check's active findings (the check runs here when None);
    ``changes=False`` skips the git diff. UnknownNameError for a role not in the config.
    """
    config = config or load_config(root)
    role = find_role(config, role_id)
    layers = frozenset(role.layers)
    if findings is None:
        from mapper.check import run_check

        findings = run_check(root, config=config).findings
    layer_views = tuple(
        LayerView(
            layer.id,
            layer.name,
            layer.description,
            tuple(sorted(n for n, _ in graph.nodes(NodeKind.COMPONENT, layer.id))),
        )
        for layer in config.layers
        if layer.id in layers
    )
    listed, base, error = (
        _changes(root, graph, config, layers, since) if changes else ((), None, None)
    )
    return RoleView(
        role=role,
        layers=layer_views,
        interfaces=_interfaces(graph, layers),
        scenarios=_scenarios(graph, layers),
        findings=tuple(f for f in findings if f.layer in layers),
        holes=_holes(graph, layers),
        changes=listed,
        changes_since=base,
        changes_error=error,
    )
