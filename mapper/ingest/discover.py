"""Interfaces discovered from the code: what an upper layer uses of a lower one.

Runs after the code and the contracts are on the graph. Every observed use that crosses layers
downward — a call, a reference to a class or constant, an ioctl use, a call through a
function-pointer slot, a base class or an overridden method — names one symbol of the lower
layer; that symbol is an interface of the pair ``<upper>_<lower>``. Routes (an ioctl use to
the handler the kernel dispatches it to) and Python mirrors of ioctl numbers are not uses:
the interface is the ioctl itself, its handler is one of its providers.

A discovered interface is matched to a contract entry of the same pair when the entry's
implementing symbol is the used symbol, encloses it (a class, a module) or lies inside it (a
class whose contracted methods the contract lists; the first such entry): the contract's
interface node then gets ``source: "both"`` and the code's providers and consumers as
attributes (its edges stay those the contract gives it); an unmatched use gets
its own node ``interface:<upper>_<lower>.<qualname>`` with ``source: "discovered"``. A contract
entry no code of its upper layer uses keeps ``source: "contract"``. A use that skips layers
(a name a layer in between re-exports) is matched against the contracts of the upper layer
with each layer in between too. Uses of an exception a
contract of the pair names in its ``errors`` are declared by it and make no node.

A use of a function-pointer slot or a base-class method that a lower layer fills or overrides
(``.graph_compute = ggml_backend_blas_graph_compute``, a C++ ``override``) is a use of that
lower layer too: plug-ins implement what the layer above declares and calls. So is a use of an
ioctl that a lower layer dispatches: with the UAPI header ranked below the kernel driver, the
ioctl is an interface of the user-space driver with both.

Each interface node carries ``layer_pair``, ``definition`` (the used symbol's id, discovered
nodes), ``providers`` and ``consumers`` — lists of
``[node id, path, line]`` (the provider's definition, the functions dispatching an ioctl or
filling a slot; every use site) — and ``source``. Edges: the used symbol ``implements`` the
interface, its layer and component ``provide`` it, each consuming component (else layer)
``consumes`` it with one evidence item per use site. Pure and deterministic.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from mapper.config import StackmapConfig
from mapper.graph import MapGraph
from mapper.model import EdgeKind, EvidenceKind, NodeKind, Provenance

Site = tuple[str, str | None, int | None]  # (node id, path, line)

_USES = (EdgeKind.CALLS, EdgeKind.REFERENCES, EdgeKind.INHERITS, EdgeKind.OVERRIDES)
_NOT_USES = frozenset({"ioctl_route", "slot_route", "ioctl_mirror", "ioctl_arg", "slot_bind"})
_PROVIDING = frozenset({"ioctl_dispatch", "slot_bind"})
_ERROR_NAME = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Fault|Timeout))\b")
_SAFE = re.compile(r"[^A-Za-z0-9_.:]+")


def discover_interfaces(graph: MapGraph, config: StackmapConfig) -> int:
    """Add the discovered interfaces to ``graph`` (see the module doc); how many new nodes."""
    order = {layer.id: i for i, layer in enumerate(config.layers)}
    filled = _implementers(graph)
    uses: dict[tuple[str, str, str], list[Site]] = defaultdict(list)
    for src, dst, data in graph.edges_of(*_USES):
        if data.get("binding") in _NOT_USES:
            continue
        a, b = graph.node(src), graph.node(dst)
        upper = a.get("layer")
        if a["kind"] == "test" or b["kind"] != "symbol" or upper not in order:
            continue
        if a.get("generated"):
            continue
        lowers = {b.get("layer"), *(graph.node(f).get("layer") for f in filled.get(dst, ()))}
        for lower in sorted(x for x in lowers if x in order and order[x] > order[upper]):
            for _kind, path, line, _conf, _detail in data["evidence"]:
                uses[(upper, lower, dst)].append((src, path, line))
    contracts = _contract_interfaces(graph)
    added = 0
    ids = [layer.id for layer in config.layers]
    for (upper, lower, target), sites in sorted(uses.items()):
        matched = _match(graph, contracts.get((upper, lower), {}), target)
        for between in ids[order[upper] + 1 : order[lower]]:  # re-exported by a layer between
            if matched is None:
                matched = _match(graph, contracts.get((upper, between), {}), target)
        if matched == "":
            continue  # an error the pair's contract declares
        iid = matched or _new_interface(graph, upper, lower, target)
        added += matched is None
        _attach(graph, iid, target, sorted(set(sites), key=_site_key))
    for iid in sorted(n for n, d in graph.nodes(NodeKind.INTERFACE) if "source" not in d):
        graph.add_node(iid, NodeKind.INTERFACE, graph.node(iid)["name"], source="contract")
        _set_pair(graph, iid)
    return added


def _implementers(graph: MapGraph) -> dict[str, list[str]]:
    """Slot or base method → the functions filling or overriding it (plug-ins: a lower layer
    implements what an upper layer declares and calls); ioctl → the functions dispatching it
    (the kernel driver implements the number its UAPI header defines)."""
    out: dict[str, list[str]] = defaultdict(list)
    for src, dst, _data in graph.edges_of(EdgeKind.OVERRIDES):
        out[dst].append(src)
    for src, dst, data in graph.edges_of(EdgeKind.IMPLEMENTS):
        if data.get("binding") == "ioctl_dispatch":
            out[dst].append(src)
    return out


def _site_key(site: Site) -> tuple[str, int, str]:
    return (site[1] or "", site[2] or 0, site[0])


def _contract_interfaces(graph: MapGraph) -> dict[tuple[str, str], dict[str, str]]:
    """(upper, lower) → implementing node id (or ``error:Name``) → contract interface id."""
    out: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for iid, data in graph.nodes(NodeKind.INTERFACE):
        pair = (data.get("upper"), data.get("lower"))
        if None in pair:
            continue
        found = out[pair]  # type: ignore[index]
        for impl, _edge in graph.in_edges(iid, EdgeKind.IMPLEMENTS):
            found.setdefault(impl, iid)
        for name in _ERROR_NAME.findall(data.get("errors") or ""):
            found.setdefault(f"error:{name}", "")
    return out


def _match(graph: MapGraph, contract: Mapping[str, str], target: str) -> str | None:
    """The contract interface ``target`` belongs to, "" for a declared error, else None."""
    if not contract:
        return None
    node = graph.node(target)
    qualname: str = node.get("qualname") or ""
    if target in contract:
        return contract[target]
    if node.get("language") == "python":
        head = qualname
        while "." in head:
            head = head.rpartition(".")[0]
            if f"symbol:{head}" in contract:
                return contract[f"symbol:{head}"]
    else:
        head = qualname
        while "::" in head:
            head = head.rpartition("::")[0]
            owner = f"symbol:c:{node.get('path')}:{head}"
            if owner in contract:
                return contract[owner]
    if f"file:{node.get('path')}" in contract:
        return contract[f"file:{node.get('path')}"]
    short = qualname.rpartition(".")[2].rpartition("::")[2]
    if f"error:{short}" in contract:
        return ""
    inside = sorted(
        k for k in contract if k.startswith(f"{target}.") or k.startswith(f"{target}::")
    )
    return contract[inside[0]] if inside else None


def _new_interface(graph: MapGraph, upper: str, lower: str, target: str) -> str:
    node = graph.node(target)
    qualname = _SAFE.sub("_", node.get("qualname") or node["name"])
    iid = f"interface:{upper}_{lower}.{qualname}"
    if iid in graph and graph.node(iid).get("symbol") != node.get("qualname"):
        iid = f"{iid}@{node.get('path')}"
    graph.add_node(
        iid,
        NodeKind.INTERFACE,
        f"{upper}_{lower}.{qualname}",
        layer=lower,
        path=node.get("path"),
        line=node.get("line"),
        interface_kind=node.get("symbol_kind"),
        symbol=node.get("qualname"),
        definition=target,
        upper=upper,
        lower=lower,
        signature=node.get("signature"),
        source="discovered",
        resolved=True,
    )
    return iid


def _attach(graph: MapGraph, iid: str, target: str, sites: list[Site]) -> None:
    """The used symbol's providers and the use sites' consumers on interface ``iid``."""
    data = graph.node(iid)
    node = graph.node(target)
    providers = [tuple(p) for p in data.get("providers") or ()]
    providers.append((target, node.get("path"), node.get("line")))
    for src, edge in graph.in_edges(target):
        if edge.get("binding") in _PROVIDING or edge["kind"] == EdgeKind.OVERRIDES.value:
            providers.extend((src, e[1], e[2]) for e in edge["evidence"])
    consumers = [tuple(c) for c in data.get("consumers") or ()] + list(sites)
    source = data.get("source")
    source = "both" if source in ("contract", "both") or data.get("contract") else "discovered"
    graph.add_node(
        iid,
        NodeKind.INTERFACE,
        data["name"],
        providers=[list(p) for p in sorted(set(providers), key=_site_key)],
        consumers=[list(c) for c in sorted(set(consumers), key=_site_key)],
        source=source,
    )
    _set_pair(graph, iid)
    if source == "both":
        return  # a contract's interface: build_contracts linked its implementer and users
    where = (node.get("path"), node.get("line"))
    graph.link(target, iid, EdgeKind.IMPLEMENTS, Provenance.TREE_SITTER, 1.0, *where)
    lower = node.get("layer")
    comp = node.get("component")
    for provider in (f"layer:{lower}", f"component:{comp}" if comp else None):
        if provider is not None:
            graph.link(provider, iid, EdgeKind.PROVIDES, Provenance.TREE_SITTER, 1.0, *where)
    for src, path, line in sites:
        user = graph.node(src)
        consumer = f"component:{user['component']}" if user.get("component") else None
        consumer = consumer or f"layer:{user.get('layer')}"
        graph.link(
            consumer,
            iid,
            EdgeKind.CONSUMES,
            Provenance.TREE_SITTER,
            1.0,
            path,
            line,
            evidence=EvidenceKind.CODE_REFERENCE,
        )


def _set_pair(graph: MapGraph, iid: str) -> None:
    data: Mapping[str, Any] = graph.node(iid)
    if data.get("upper") and data.get("lower"):
        pair = f"{data['upper']}_{data['lower']}"
        graph.add_node(iid, NodeKind.INTERFACE, data["name"], layer_pair=pair)
