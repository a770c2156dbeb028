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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mapper.check.finding import Finding
from mapper.config import RoleConfig, StackmapConfig
from mapper.errors import MapperError, UnknownNameError
from mapper.model import Edge, NodeKind
from mapper.query import Map

#: How many commits back "recent" changes reach when no ``since`` revision is given.
RECENT_COMMITS = 20


@dataclass(frozen=True, slots=True)
class Party:
    """One end of an interface: a provider or a consumer, with the evidence that says so."""

    id: str
    kind: str
    layer: str | None
    evidence: str  # the kind of the edge's strongest evidence: contract, code_reference, ...
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


def _parties(m: Map, edges: list[Edge]) -> tuple[Party, ...]:
    out = []
    for edge in edges:
        node = m.node(edge.source)
        cite = edge.citation
        out.append(
            Party(
                edge.source,
                node.kind.value if node else "?",
                node.layer if node else None,
                cite.kind.value,
                cite.path,
                cite.line,
            )
        )
    return tuple(sorted(out, key=lambda p: (p.kind != "layer", p.id)))


def _interfaces(m: Map, layers: frozenset[str]) -> tuple[BoundaryInterface, ...]:
    out = []
    for n in m.nodes(NodeKind.INTERFACE):
        if n.get("upper") not in layers and n.get("lower") not in layers:
            continue
        out.append(
            BoundaryInterface(
                n.id,
                n.name,
                n.get("upper"),
                n.get("lower"),
                n.get("sync"),
                n.get("synchronization"),
                n.get("description"),
                n.path,
                n.line,
                providers=_parties(m, m.providers(n.id) + m.implementations(n.id)),
                consumers=_parties(m, m.consumers(n.id)),
            )
        )
    return tuple(sorted(out, key=lambda i: i.id))


def _step_layers(m: Map, target: str) -> set[str]:
    node = m.node(target)
    if node is None:
        return set()
    if node.kind is NodeKind.INTERFACE:
        return {x for x in (node.get("upper"), node.get("lower")) if x}
    return {node.layer} if node.layer else set()


def _scenarios(m: Map, layers: frozenset[str]) -> tuple[ScenarioCrossing, ...]:
    out = []
    for n in m.nodes(NodeKind.SCENARIO):
        steps = []
        for step in sorted(n.get("steps") or [], key=lambda s: s.get("order", 0)):
            target = str(step.get("target"))
            node = m.node(target)
            steps.append(
                ScenarioStepView(
                    int(step.get("order", 0)),
                    target,
                    str(step.get("action", "")),
                    node.layer if node else None,
                    bool(_step_layers(m, target) & layers),
                )
            )
        if any(s.in_role for s in steps):
            out.append(ScenarioCrossing(n.id, n.name, n.path, tuple(steps)))
    return tuple(sorted(out, key=lambda s: s.id))


def _holes(m: Map, layers: frozenset[str]) -> tuple[HoleView, ...]:
    out = []
    for hole in m.holes():
        node = m.node(hole.node)
        layer = node.layer if node else None
        if layer in layers or layer is None:
            where = hole.location
            out.append(
                HoleView(
                    hole.node,
                    layer,
                    tuple(hole.missing),
                    hole.reason,
                    where.path if where else None,
                    where.line if where else None,
                )
            )
    return tuple(out)


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
    root: Path, m: Map, layers: frozenset[str], since: str | None
) -> tuple[tuple[dict[str, str], ...], str | None, str | None]:
    from mapper.versions import Impact, diff_revisions

    contract_layers: dict[str, set[str]] = {}
    for n in m.nodes(NodeKind.INTERFACE):
        if n.path:
            contract_layers.setdefault(n.path, set()).update(
                x for x in (n.get("upper"), n.get("lower")) if x
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
        touched = contract_layers.get(path) or {m.config.layer_of(path)} - {None}
        hit = sorted(x for x in touched if x in layers)
        if hit:
            out.append({**change.to_dict(), "layer": ", ".join(hit)})
    return tuple(out), base, None


def role_view(
    root: Path,
    role_id: str,
    m: Map,
    *,
    findings: tuple[Finding, ...] | None = None,
    since: str | None = None,
    changes: bool = True,
) -> RoleView:
    """The view of ``role_id`` over ``m`` (the current map of ``root``, from
    :func:`mapper.query.open_map`).

    ``findings`` are the check's active findings (the map's own when None); ``changes=False``
    skips the git diff. UnknownNameError for a role not in the config.
    """
    role = find_role(m.config, role_id)
    layers = frozenset(role.layers)
    if findings is None:
        findings = tuple(m.findings())
    layer_views = tuple(
        LayerView(
            layer.id,
            layer.name,
            layer.description,
            tuple(sorted(n.id for n in m.nodes(NodeKind.COMPONENT, layer.id))),
        )
        for layer in m.config.layers
        if layer.id in layers
    )
    listed, base, error = _changes(root, m, layers, since) if changes else ((), None, None)
    return RoleView(
        role=role,
        layers=layer_views,
        interfaces=_interfaces(m, layers),
        scenarios=_scenarios(m, layers),
        findings=tuple(f for f in findings if f.layer in layers),
        holes=_holes(m, layers),
        changes=listed,
        changes_since=base,
        changes_error=error,
    )
