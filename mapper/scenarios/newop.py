"""``stackmap scenario new-op NAME [--like EXISTING]``: where a new operator must go, per layer.

Derived from the footprint of the most similar existing op on the map (:mod:`.vocab`): its
vocabulary values (Python enums, proto enum values, C header values), the definitions and tests
spelt after it, what registers it or names its values, the docs on those; then the stack's
conventions (:mod:`.conventions`, :mod:`.capacity`, :mod:`.early`). Each point carries the
place it is modelled on; a layer holding none says why, with the interfaces crossing it.
"""

from __future__ import annotations

from mapper.errors import UnknownNameError
from mapper.impact.mapview import MapView, Node, cite
from mapper.impact.records import Hop, hop_of
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import (
    attrcodes,
    branches,
    capacity,
    catalogues,
    companions,
    conventions,
    early,
    footprint,
    handlers,
    namestyle,
    newest,
    newop_places,
    opfamily,
    ownmodules,
    shapeinputs,
    similar,
    strings,
    vocab,
)
from mapper.scenarios.records import ChangePoint, LayerPlan, NewOpWalk, PointKind, unique


def _layer(view: MapView, node: Node) -> str | None:
    return node.layer or (view.config.layer_of(node.path) if node.path else None)


def _definition_hop(view: MapView, node: Node) -> tuple[Hop, ...]:
    edges = view.neighbours(node.id, {EdgeKind.DEFINES}, "in")
    return (hop_of(view, edges[0], False),) if edges else ()


def walk_new_op(view: MapView, name: str, like: str | None = None) -> NewOpWalk:
    """Change points for a new op ``name``, modelled on ``like`` (or the most similar op);
    UnknownNameError listing the known ops when ``like`` is not one of them."""
    known = opfamily.ops(view)
    ranked = similar.similar_ops(name, known)
    if like is not None:
        found = opfamily.find(known, like)
        if found is None:
            raise UnknownNameError("op", like, list(known))
        token = found
    else:
        token = ranked[0][0]
    new = vocab.compact(name)
    new_words = vocab.op_words(name)
    values = known[token]
    spelt = vocab.spellings(values)
    others = {s for t, vs in known.items() if t != token for s in vocab.spellings(vs)} - spelt
    forms = vocab.new_forms(spelt, new)
    vocabs = opfamily.op_vocabularies(view)
    spelt_as = namestyle.Spelling(view, values, spelt)
    points: list[ChangePoint] = []
    seen: set[str] = set()
    for value in values:
        node = value.node
        seen.add(node.id)
        family = (
            value.vocabulary.rpartition(":")[2]
            if value.vocabulary.startswith("symbol:")
            else value.vocabulary
        )
        points.append(
            ChangePoint(
                PointKind.VOCABULARY,
                _layer(view, node),
                node.path,
                node.line,
                node.id,
                vocab.rename(node.name, forms, new_words),
                f"add a value for {name} to {family} "
                f"(like {vocab.short_name(node)} = {node.get('value')})",
                _definition_hop(view, node),
            )
        )
        points.extend(_uses(view, node, name, spelt, vocabs[value.vocabulary]))
        points.extend(_keyed(view, node, name, spelt))
    ids = {v.node.id for v in values}
    named = vocab.named_after(view, spelt)
    switched = footprint.dispatched(view, named, ids)
    for node in named:
        short = vocab.short_name(node)
        if node.id in seen or footprint.spells_another(short, spelt, others):
            continue
        seen.add(node.id)
        test = node.kind is NodeKind.TEST
        if not test and handlers.foreign(view, node, spelt):
            continue  # registered only under other ops' keys: their handler
        own_module = not test and newop_places.devoted(node, spelt)
        bound = node.id in switched or footprint.bound(view, node, ids)
        if not test and not own_module and not bound:
            continue  # a helper spelt after the op that nothing ties to it
        if not test and any(footprint.enumerates(view, node, vs) for vs in vocabs.values()):
            continue  # a family handler: its enumerating members are extended above
        tabled = [] if test or own_module else footprint.table_lines(view, node, ids)
        if own_module:  # a module of its own, like the similar op's (registered there too)
            layer = _layer(view, node)
            points += newop_places.new_module(view, node, name, layer, spelt, forms, spelt_as)
            points += _registrations(view, node, forms, name)  # moved there by ownmodules
            continue
        if (
            not test
            and not tabled
            and node.id not in switched
            and not _in_place(view, node, vocabs)
        ):
            continue  # behaviour peculiar to the op, in a module about a few ops
        kind = PointKind.TEST if test else PointKind.IMPLEMENTATION
        verb = "add a test" if test else f"write the {name} counterpart of"
        points.append(
            ChangePoint(
                kind,
                None if test else _layer(view, node),
                node.path,
                node.line,
                node.id,
                vocab.rename(str(node.get("qualname") or node.name), forms, new_words),
                f"{verb} {node.name}",
                _definition_hop(view, node),
            )
        )
        points.extend(_registrations(view, node, forms, name))
        points.extend(newop_places.table_rows(view, node, tabled, name, spelt))
    points.extend(handlers.handled(view, spelt, name))
    rows = newop_places.mapping_rows(view, values, name, spelt)
    points.extend(rows)
    points.extend(branches.family_points(view, rows, known, token, name))
    models = {p.like for p in points if p.kind is PointKind.IMPLEMENTATION}
    points = [p for p in points if footprint.tests_own_code(view, p, models)]
    points = footprint.without_fast_paths(view, points)
    points = capacity.into_new_modules(view, points, name, spelt)  # modules without room
    handlers_at = branches.family_modules(view, rows, known)
    points = ownmodules.into_own_modules(view, known, token, name, points, handlers_at)
    points.extend(companions.proto_companions(view, points, forms, name))
    devoted = newop_places.new_modules(view, points)
    seen = {p.path for p in points if p.kind in (PointKind.USE, PointKind.REGISTRATION) and p.path}
    points.extend(strings.string_lists(view, known, token, name, devoted, seen))
    points.extend(early.mentions(view, name))  # code naming the op before it exists
    if shapeinputs.applies(name):  # an input carrying a shape
        points.extend(shapeinputs.doc_lists(view, name))
    written = [p for p in points if p.kind is PointKind.IMPLEMENTATION]
    points.extend(newop_places.docs(view, written, spelt))  # of the op's code and its modules
    new_modules = newop_places.new_modules(view, written)
    points.extend(catalogues.rows(view, written, new_modules, spelt, name))  # module tables
    points.extend(newop_places.op_lists(view, known, token, name))
    points.extend(newest.sections(view, known, name, points))  # pages following the ops
    points.extend(conventions.test_modules(view, known, name, token))
    points = conventions.into_own_modules(view, known, token, name, points)
    points.extend(conventions.attribute_contracts(view, known, token, name))
    codes = attrcodes.attribute_codes(view, known, name, points, rows)  # beside the kernel
    weak = like is None and ranked[0][1] < similar.WEAK
    return _plan(view, name, token, ranked[:5], unique(points) + codes, weak)


def _in_place(view: MapView, node: Node, vocabs: dict[str, list[vocab.Value]]) -> bool:
    """A counterpart goes beside ``node`` when ``node`` is registered, or its module defines
    an op vocabulary or enumerates one (a table of ops, the family's handlers)."""
    if view.neighbours(node.id, {EdgeKind.REGISTERS}, "both"):
        return True
    module = view.node(f"file:{node.path}")
    if module is None:
        return False
    values = {v.node.id for vs in vocabs.values() for v in vs}
    defined = {e.target for e in view.neighbours(module.id, {EdgeKind.DEFINES}, "out")}
    if defined & values:
        return True
    named = footprint.cited_values(view, module.id)
    for symbol in defined:
        named |= footprint.cited_values(view, symbol, True)
    return any(
        len(named & {v.node.id for v in vs}) >= footprint.least(vs) for vs in vocabs.values()
    )


def _keyed(view: MapView, value: Node, name: str, spelt: set[str]) -> list[ChangePoint]:
    """Registries keyed by ``value``: the new op's value must be registered there too."""
    out = []
    for edge in view.neighbours(value.id, {EdgeKind.REGISTERS}, "in"):
        ev = view.citation(edge)
        out.append(
            ChangePoint(
                PointKind.REGISTRATION,
                _layer(view, value) if not ev.path else view.config.layer_of(ev.path),
                ev.path,
                ev.line,
                value.id,
                footprint.enclosing(view, ev.path, ev.line, spelt),
                f"register {name} in {edge.source} like {vocab.short_name(value)} "
                f"({ev.detail or cite(ev)})",
                (hop_of(view, edge, False),),
            )
        )
        out.extend(handlers.keyed_handler(view, edge, spelt, name))
    return out


def _uses(
    view: MapView, value: Node, name: str, spelt: set[str], vocabulary: list[vocab.Value]
) -> list[ChangePoint]:
    """Definitions and modules enumerating ``value``'s vocabulary where they name it."""
    kind = EdgeKind.REFERENCES
    out = []
    for edge in view.neighbours(value.id, {kind}, "in"):
        user = view.node(edge.source)
        if user is None or user.kind not in (NodeKind.SYMBOL, NodeKind.FILE):
            continue
        if user.kind is NodeKind.SYMBOL and vocab.runs(vocab.short_name(user)) & spelt:
            continue  # spelt after the op itself: a counterpart to write, not code to extend
        if not footprint.enumerates(view, user, vocabulary):
            continue  # behaviour peculiar to this op, not a place every op enters
        ev = view.citation(edge)
        out.append(
            ChangePoint(
                PointKind.USE,
                _layer(view, user),
                ev.path or user.path,
                ev.line or user.line,
                user.id,
                footprint.enclosing(view, ev.path or user.path, ev.line or user.line, spelt),
                f"extend {user.name}: it names {vocab.short_name(value)} at {cite(ev)}",
                (hop_of(view, edge, False),),
            )
        )
    return out


def _registrations(
    view: MapView, node: Node, forms: dict[str, str], name: str
) -> list[ChangePoint]:
    kind = EdgeKind.REGISTERS
    out = []
    for edge in view.neighbours(node.id, {kind}, "both"):
        ev = view.citation(edge)
        registry = edge.target if edge.source == node.id else edge.source
        out.append(
            ChangePoint(
                PointKind.REGISTRATION,
                _layer(view, node),
                ev.path or node.path,
                ev.line or node.line,
                node.id,
                vocab.rename(node.name, forms, vocab.op_words(name)),
                f"register the {name} counterpart in {registry} ({ev.detail or cite(ev)})",
                (hop_of(view, edge, edge.source == node.id),),
            )
        )
    return out


def _plan(
    view: MapView,
    name: str,
    like: str,
    ranked: list[tuple[str, float]],
    points: list[ChangePoint],
    weak: bool,
) -> NewOpWalk:
    by_layer: dict[str, list[ChangePoint]] = {}
    outside: list[ChangePoint] = []
    for point in points:
        if point.layer is None:
            outside.append(point)
        else:
            by_layer.setdefault(point.layer, []).append(point)
    plans = []
    layers = view.layers()
    for i, layer in enumerate(layers):
        found = sorted(
            by_layer.get(layer, []), key=lambda p: (p.kind.value, p.path or "", p.line or 0)
        )
        if found:
            plans.append(LayerPlan(layer, tuple(found)))
            continue
        crossing = []
        for upper, lower in (
            (layers[i - 1] if i else None, layer),
            (layer, layers[i + 1] if i + 1 < len(layers) else None),
        ):
            if upper and lower:
                crossing += [
                    n.id
                    for n in view.nodes(NodeKind.INTERFACE)
                    if n.get("upper") == upper and n.get("lower") == lower
                ]
        symbols = sum(1 for _ in view.nodes(NodeKind.SYMBOL, layer))
        reason = (
            f"no change: none of the {symbols} definitions of {layer} is spelt after {like} "
            f"or holds one of its vocabulary values; the op crosses {layer} through "
            f"{', '.join(sorted(crossing)[:6]) or 'no contract interface'} unchanged"
        )
        plans.append(LayerPlan(layer, (), reason))
    outside.sort(key=lambda p: (p.kind.value, p.path or "", p.line or 0))
    return NewOpWalk(name, like, tuple(ranked), tuple(plans), tuple(outside), weak)
