"""The footprint of one op on the map: what a new op modelled on it must enter or mirror.

Rules (generic over ops, read from the map's edges):

- every value naming the op (:mod:`.opfamily`) — a vocabulary to extend;
- every registry keyed by one of those values (a ``registers`` edge) — a registration;
- every definition or module that *enumerates* one of the op's vocabularies (names the op's
  value among a third of the vocabulary at least: a table, a dispatch over the ops) — a place
  to extend; code naming the op among a few others is behaviour peculiar to those ops (a
  fusion, a folding), which a new op does not inherit, unless it is about the family the new
  op joins (:mod:`.branches`);
- every definition spelt after the op that is *bound* to it (registered, or naming one of its
  values, or in a module naming or defining one, or, in C, called by a function switching on
  one: :func:`dispatched`) and does not also spell another op (``fold_batchnorm_into_conv``
  is about the pair) — a counterpart to write;
- every test spelt after the op and no other op — a test to add;
- but no counterpart of a fast path (:func:`without_fast_paths`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mapper.impact.mapview import Edge, MapView, Node
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import vocab
from mapper.scenarios.records import ChangePoint, PointKind
from mapper.scenarios.vocab import Value

CITING = frozenset({EdgeKind.REFERENCES, EdgeKind.REGISTERS})
ENUMERATES = 3  # the op's value and two others of its vocabulary


def cited_values(view: MapView, node_id: str, members: bool = False) -> set[str]:
    """Node ids ``node_id`` names (and, with ``members``, what the definitions it contains
    name)."""
    out = {e.target for e in view.neighbours(node_id, {EdgeKind.REFERENCES}, "out")}
    if members:
        for edge in view.neighbours(node_id, {EdgeKind.CONTAINS}, "out"):
            out |= cited_values(view, edge.target, True)
    return out


def enumerates(view: MapView, user: Node, vocabulary: Iterable[Value]) -> bool:
    """``user`` names at least a third of the values of one vocabulary (and no fewer than
    :data:`ENUMERATES`): a table or a dispatch over the ops, not code about a few of them."""
    ids = {v.node.id for v in vocabulary}
    own = user.kind is NodeKind.SYMBOL and user.get("symbol_kind") == "class"
    return len(cited_values(view, user.id, own) & ids) >= least(vocabulary)


def least(vocabulary: Iterable[Value]) -> int:
    """How many values of a vocabulary a place names to enumerate it."""
    return max(ENUMERATES, -(-len({v.node.id for v in vocabulary}) // 3))


def spells_another(name: str, spelt: set[str], others: set[str]) -> bool:
    """``name`` spells an op other than this one (a run not covered by this op's spellings)."""
    found = vocab.runs(name) & others
    return any(not any(o in s for s in spelt) for o in found)


def bound(view: MapView, node: Node, values: set[str]) -> bool:
    """``node`` is registered, or it (or a member) names one of the op's ``values``, or its
    module does at module level (a table mapping the value onto it) or defines one."""
    if view.neighbours(node.id, {EdgeKind.REGISTERS}, "both"):
        return True
    if cited_values(view, node.id, True) & values:
        return True
    module = f"file:{node.path}"
    defined = {e.target for e in view.neighbours(module, {EdgeKind.DEFINES}, "out")}
    return bool(node.path and (cited_values(view, module) | defined) & values)


def dispatched(view: MapView, nodes: Iterable[Node], values: set[str]) -> set[str]:
    """The C definitions among ``nodes`` that a function switching on one of the op's
    ``values`` calls (``case GGML_OP_ADD: ggml_compute_forward_add(…)``: the case's handler),
    and the prototypes of the same name (the header declaring the handler)."""
    c_nodes = [n for n in nodes if n.id.startswith("symbol:c:")]
    handlers = set()
    for node in c_nodes:
        for call in view.neighbours(node.id, {EdgeKind.CALLS}, "in"):
            cases = view.neighbours(call.source, {EdgeKind.REFERENCES}, "out")
            if any(e.target in values and e.attrs.get("binding") == "enum_case" for e in cases):
                handlers.add(str(node.get("qualname") or node.name))
                break
    return {n.id for n in c_nodes if str(n.get("qualname") or n.name) in handlers}


_ENCLOSING = frozenset({"function", "method", "class", "constant", "struct"})
_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", re.MULTILINE)


def enclosing(view: MapView, path: str | None, line: int | None, spelt: set[str]) -> str:
    """The innermost definition holding ``path:line`` (a table, a registry function, a
    test's list) that gains the new op's line; "" outside any, or where the definition is
    spelt after the op (its counterpart is written, not extended)."""
    if not path or not line:
        return ""
    for node in view.definitions_at(path, line):
        test = node.kind is NodeKind.TEST
        if test or (node.kind is NodeKind.SYMBOL and node.get("symbol_kind") in _ENCLOSING):
            if vocab.runs(vocab.short_name(node)) & spelt:
                return ""
            return str(node.get("qualname") or node.name) if test else node.name
    return ""


def tests_own_code(view: MapView, point: ChangePoint, models: set[str]) -> bool:
    """False for a test point whose model test covers definitions, none of them one the new
    op gets a counterpart of (``models``): it tests shared code (a pass, a launcher, the
    pipeline) on the similar op, behaviour peculiar to it; and one in a module testing a tool
    beside the stack (:func:`tests_a_tool`: the map's own questions about the op). A test
    covering nothing the map sees (it runs the op through a fixture) and every other point
    are kept."""
    if point.kind is not PointKind.TEST:
        return True
    if point.path and tests_a_tool(view, f"file:{point.path}"):
        return False
    covered = {
        e.target
        for e in view.neighbours(point.like, {EdgeKind.COVERS}, "out")
        if e.target.startswith("symbol:")
    }
    return not covered or bool(covered & models)


def table_lines(view: MapView, node: Node, values: set[str]) -> list[Edge]:
    """The references to the op's ``values`` from ``node``'s module whose line also names
    ``node`` (``KernelId.GATHER: gather``, ``(OpType.GATHER, _gather)``): a table of a
    family's ops mapping the op onto its definition, where the new op's definition and row
    go too."""
    if not node.path:
        return []
    short = vocab.short_name(node)
    word = re.compile(rf"\b{re.escape(short)}\b")
    text = source_lines(view, node.path)
    out = []
    for value in values:
        for edge in view.neighbours(value, {EdgeKind.REFERENCES}, "in"):
            ev = view.citation(edge)
            line = ev.line or 0
            if ev.path == node.path and 0 < line <= len(text) and word.search(text[line - 1]):
                out.append(edge)
    return out


def tests_a_tool(view: MapView, file_id: str) -> bool:
    """Whether the test file ``file_id`` tests a tool beside the stack: it imports code of the
    repository that lies in no layer (the map tool's own, say) and none that lies in one (the
    tests' own helpers count as neither)."""
    layered = view.cache.get("footprint.layered")
    if not isinstance(layered, set):
        layered = {str(n.get("module")) for n in view.nodes(NodeKind.FILE) if n.layer}
        view.cache["footprint.layered"] = layered
    beside = False
    for found in _IMPORT.finditer(view.source(file_id.removeprefix("file:")) or ""):
        parts = (found[1] or found[2]).split(".")
        if any(".".join(parts[:i]) in layered for i in range(len(parts), 0, -1)):
            return False
        beside = beside or _first_party(view, parts[0])
    return beside


def _first_party(view: MapView, head: str) -> bool:
    """Whether ``head`` names a package or module at the root that is no test folder (looked
    up once per map view)."""
    cache = view.cache.setdefault("footprint.first_party", {})
    assert isinstance(cache, dict)
    if head not in cache:
        place = view.config.root / head
        cache[head] = not view.config.is_test(f"{head}/__init__.py") and (
            place.is_dir() or place.with_suffix(".py").is_file()
        )
    found: bool = cache[head]
    return found


def source_lines(view: MapView, path: str) -> list[str]:
    """The lines of ``path`` under the root, split once per map view ([] where unreadable)."""
    cache = view.cache.setdefault("footprint.lines", {})
    assert isinstance(cache, dict)
    if path not in cache:
        cache[path] = (view.source(path) or "").splitlines()
    lines: list[str] = cache[path]
    return lines


def without_fast_paths(view: MapView, points: list[ChangePoint]) -> list[ChangePoint]:
    """``points`` less the counterparts of a fast path: a definition that calls the similar
    op's counterpart of the same name in another module (``cupy_kernels.maxpool`` falling
    back to ``pool.maxpool``) specialises that implementation for some cases, which a new op
    need not have; the implementation it calls serves the new op everywhere. The fast path's
    table rows go with it."""
    written = {p.like for p in points if p.kind is PointKind.IMPLEMENTATION}
    fast = set()
    for like in written:
        node = view.node(like)
        if node is None:
            continue
        short = vocab.short_name(node)
        for edge in view.neighbours(like, {EdgeKind.CALLS}, "out"):
            callee = view.node(edge.target)
            if (
                edge.target in written
                and callee is not None
                and callee.path != node.path
                and vocab.short_name(callee) == short
            ):
                fast.add(like)
    return [p for p in points if p.like not in fast]
