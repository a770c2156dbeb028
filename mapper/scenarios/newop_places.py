"""Where a new op goes beyond the similar op's own definitions: new modules, the lists of
modules they join, and the prose and contract text listing every op.

- A counterpart of a definition whose module is *devoted* to the similar op (the module's
  name spells it: ``kernels/conv.py``, ``translators/conv_pool.py``) goes into a new sibling
  module named after the new op (``kernels/conv_transpose.py``); a module importing the
  devoted one beside at least :data:`SIBLINGS` other modules of its folder (a backend's list
  of kernel modules, a package's list of translators) must import the new one too.
- A doc section or a contract interface whose text names at least a third of the known ops,
  the similar one among them, is a list of ops the new one joins. A section naming the
  similar op among a few others describes behaviour peculiar to it, which the new op does
  not inherit.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from mapper.impact.mapview import Edge, EvidenceKind, MapView, Node, cite
from mapper.impact.records import Hop, hop_of
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import footprint, importers, namestyle, vocab
from mapper.scenarios.records import ChangePoint, PointKind

SIBLINGS = 3
FOCUSED = 4  # modules a doc section describing one of them is about at most
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def devoted(node: Node, spelt: set[str]) -> bool:
    """Whether ``node``'s module is named after the similar op."""
    return devoted_path(node.path or "", spelt)


def devoted_path(path: str, spelt: set[str]) -> bool:
    """Whether the module at ``path`` is named after the similar op."""
    stem = posixpath.basename(path).partition(".")[0]
    return bool(stem) and bool(vocab.runs(stem) & spelt)


def module_name(name: str) -> str:
    """The file stem a new op's module takes (``ConvTranspose`` → ``conv_transpose``,
    ``BitCast`` → ``bitcast``: :func:`~mapper.scenarios.vocab.module_stem`)."""
    return vocab.module_stem(name)


def new_module(
    view: MapView,
    node: Node,
    name: str,
    layer: str | None,
    spelt: set[str],
    forms: dict[str, str],
    spelt_as: namestyle.Spelling,
) -> list[ChangePoint]:
    """The new sibling module for the counterpart of ``node`` (same suffixes:
    ``conv2d.opdesc.json`` → ``conv_transpose.opdesc.json``; the same prefix before a stem
    ending in the similar op's name: ``ops_bitcast.py`` → ``ops_det.py``; its stem spells the
    new op's words joined where the module's stem spells the similar op's joined, ``spelt_as`` says:
    ``maxpool.opdesc.json`` → ``maxunpool.opdesc.json``), and the module lists it joins
    (importers not themselves devoted to the similar op). A name spelt after the module's
    whole stem is spelt after the new one (``ConvPoolTranslator`` in ``conv_pool.py`` →
    ``ConvTransposeTranslator`` in ``conv_transpose.py``)."""
    path = node.path or ""
    folder, base = posixpath.split(path)
    suffix = base.partition(".")[2]
    written = base.partition(".")[0]
    seg = namestyle.segment(written, spelt)
    form = forms.get(vocab.compact(seg or ""), vocab.compact(name))
    stem = namestyle.stem(name, spelt_as.joined_in(written), form)
    if seg and written.endswith("_" + seg):  # ops_maxpool.py → ops_<op>.py: the prefix stays
        stem = written[: -len(seg)] + stem
    elif seg and "-" in written:  # gated-delta-net-ops.c → <op words>-ops.c: spelt with dashes
        stem = written.replace(seg, "-".join(vocab.op_words(name)), 1)
    target = posixpath.join(folder, stem + (f".{suffix}" if suffix else ""))
    file = view.node(f"file:{path}")
    module = file.get("module") if file is not None else None
    predicted = ""  # a Python module's counterpart has a name to predict
    if module and path.endswith(".py"):
        package = str(module).rpartition(".")[0]
        own = {vocab.compact(base.partition(".")[0]): vocab.compact(name), **forms}
        predicted = (
            f"{package}.{stem}.{vocab.rename(vocab.short_name(node), own, vocab.op_words(name))}"
        )
    defines = view.neighbours(node.id, {EdgeKind.DEFINES}, "in")
    out = [
        ChangePoint(
            PointKind.IMPLEMENTATION,
            layer,
            target,
            1,
            node.id,
            predicted,
            f"write the {name} counterpart of {node.name} in a new module {target}, as "
            f"{path} holds the similar op's",
            (hop_of(view, defines[0], False),) if defines else (),
        )
    ]
    for edge in view.neighbours(f"file:{path}", {EdgeKind.IMPORTS}, "in"):
        importer = view.node(edge.source)
        if importer is None or devoted(importer, spelt):
            continue
        siblings = {
            e.target
            for e in view.neighbours(edge.source, {EdgeKind.IMPORTS}, "out")
            if posixpath.dirname(e.target.removeprefix("file:")) == folder
        }
        if len(siblings - {f"file:{path}"}) < SIBLINGS:
            continue
        ev = view.citation(edge)
        enclosing = footprint.enclosing(view, ev.path, ev.line, spelt)
        why = f"it lists {len(siblings)} modules of {folder}"
        out.append(importers.beside(view, edge, target, layer, enclosing, why))
        out.extend(importers.listings(view, edge.source, {node.id}, target))
    return out


def _ops_named(text: str, spellings: dict[str, set[str]]) -> set[str]:
    found: set[str] = set()
    for word in _TOKEN.findall(text):
        found |= spellings.get(vocab.compact(word), set())
    return found


def op_lists(
    view: MapView, known: dict[str, list[vocab.Value]], token: str, name: str
) -> list[ChangePoint]:
    """Doc sections and contract interfaces listing the ops (a third of them at least, the
    similar op ``token`` among them)."""
    spellings: dict[str, set[str]] = {}
    for op, values in known.items():
        for spelling in vocab.spellings(values):
            spellings.setdefault(spelling, set()).add(op)
    least = max(3, -(-len(known) // 3))
    like = known[token][0].node.id
    out = []
    for node in _texts(view):
        text = node.get("text") or node.get("description") or ""
        named = _ops_named(str(text), spellings) if text else set()
        if token not in named or len(named) < least:
            continue
        contract = node.kind is NodeKind.INTERFACE
        why = Hop(
            node.id,
            like,
            EdgeKind.DESCRIBES.value,
            EvidenceKind.CONTRACT if contract else EvidenceKind.DOC_MENTION,
            node.path,
            node.line,
            0.9,
            True,
            f"names {len(named)} of the {len(known)} ops, {token} among them",
        )
        out.append(
            ChangePoint(
                PointKind.CONTRACT if contract else PointKind.DOC,
                None,
                node.path,
                node.line,
                like,
                node.id,
                f"add {name} to the ops {node.id} lists ({len(named)} of {len(known)})",
                (why,),
            )
        )
    return out


def _texts(view: MapView) -> Iterable[Node]:
    yield from view.nodes(NodeKind.DOC)
    yield from view.nodes(NodeKind.INTERFACE)


def new_modules(view: MapView, points: Iterable[ChangePoint]) -> dict[str, set[str]]:
    """Each new module predicted → the similar op's modules it mirrors."""
    out: dict[str, set[str]] = {}
    for p in points:
        like = view.node(p.like)
        if (
            p.kind is PointKind.IMPLEMENTATION
            and p.path
            and like is not None
            and like.path
            and view.node(f"file:{p.path}") is None
            and like.path != p.path
        ):
            out.setdefault(p.path, set()).add(like.path)
    return out


def docs(view: MapView, points: Iterable[ChangePoint], spelt: set[str]) -> list[ChangePoint]:
    """Doc sections describing the similar op's definitions the new op gets counterparts of,
    and those about a few modules (:data:`FOCUSED`), one the new op's code goes into, whose
    text names the similar op (a page listing the ops whose rules the module holds)."""
    out: dict[str, ChangePoint] = {}
    for point in points:
        edges = view.neighbours(point.like, {EdgeKind.DESCRIBES}, "in")
        if point.path and view.node(f"file:{point.path}") is not None:
            edges += [
                e
                for e in view.neighbours(f"file:{point.path}", {EdgeKind.DESCRIBES}, "in")
                if _names_op(view.node(e.source), spelt) and _focused(view, e.source)
            ]
        for edge in edges:
            doc = view.node(edge.source)
            if doc is None or doc.id in out:
                continue
            ev = view.citation(edge)
            out[doc.id] = ChangePoint(
                PointKind.DOC,
                None,
                ev.path or doc.path,
                ev.line or doc.line,
                point.like,
                doc.id,
                f"update {doc.id}: it describes {point.like}",
                (hop_of(view, edge, False),),
            )
    return list(out.values())


def _focused(view: MapView, doc: str) -> bool:
    """Whether the section is about a few modules (an overview of a layer names ops in
    passing)."""
    described = view.neighbours(doc, {EdgeKind.DESCRIBES}, "out")
    return sum(1 for e in described if e.target.startswith("file:")) <= FOCUSED


def _names_op(doc: Node | None, spelt: set[str]) -> bool:
    text = str(doc.get("text") or "") if doc is not None else ""
    return any(vocab.runs(w) & spelt for w in _TOKEN.findall(text))


def table_rows(
    view: MapView, node: Node, edges: list[Edge], name: str, spelt: set[str]
) -> list[ChangePoint]:
    """A row for the new op's definition in each table mapping the similar op's value onto
    ``node`` (:func:`~mapper.scenarios.footprint.table_lines`)."""
    out = []
    for edge in edges:
        ev = view.citation(edge)
        out.append(
            ChangePoint(
                PointKind.REGISTRATION,
                view.config.layer_of(ev.path) if ev.path else None,
                ev.path,
                ev.line,
                node.id,
                footprint.enclosing(view, ev.path, ev.line, spelt),
                f"map {name} onto its {vocab.short_name(node)} counterpart at {cite(ev)}, "
                f"as the similar op's row does",
                (hop_of(view, edge, False),),
            )
        )
    return out


def mapping_rows(
    view: MapView, values: list[vocab.Value], name: str, spelt: set[str]
) -> list[ChangePoint]:
    """Lines mapping the similar op's value in one op vocabulary onto its value in another
    (``OpKind.GATHER: KernelId.GATHER``): the new op's values are mapped the same way. A
    line in a module devoted to the similar op is left to the new op's own module."""
    cited: dict[tuple[str, int], dict[str, Edge]] = {}
    for value in values:
        for edge in view.neighbours(value.node.id, footprint.CITING, "in"):
            ev = view.citation(edge)
            if ev.path and ev.line:
                cited.setdefault((ev.path, ev.line), {}).setdefault(value.vocabulary, edge)
    out = []
    for (path, line), edges in sorted(cited.items()):
        if len(edges) < 2 or devoted_path(path, spelt):
            continue
        edge = edges[min(edges)]
        out.append(
            ChangePoint(
                PointKind.USE,
                view.config.layer_of(path),
                path,
                line,
                edge.target,
                footprint.enclosing(view, path, line, spelt),
                f"map {name}'s values onto each other at {path}:{line}, as the similar op's are",
                (hop_of(view, edge, False),),
            )
        )
    return out
