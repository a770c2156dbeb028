"""Add contracts (interfaces), doc pages and sections, and scenarios to the graph.

Runs after :func:`mapper.ingest.build.build_code`, on the same graph and resolver. Doc pages
become ``doc:<path>`` nodes with one ``doc:<path>#<anchor>`` node per section; front matter
gives ``describes`` edges (layer, component, interfaces, symbols, scenario) and component
``upstream``/``downstream`` lists become component → component ``calls`` edges (provenance
doc). Backticked mentions, and the calls of code samples, that name an existing file, interface,
component, layer or symbol (:class:`~mapper.ingest.mentions.MentionNames`) give ``describes``
edges from their section (confidence 0.9); so does a bare file name (```det.py```) on a page
whose front-matter ``paths`` hold exactly one file of that name: a page about
``stack/umd/translators/*.py`` that writes ``det.py`` means ``stack/umd/translators/det.py``.
"""

from __future__ import annotations

import bisect
import itertools
import posixpath
from collections.abc import Mapping

from mapper.config import StackmapConfig
from mapper.globs import glob_regex
from mapper.graph import MapGraph
from mapper.ingest.build import Inputs
from mapper.ingest.components import declared_components
from mapper.ingest.docs import DocPage
from mapper.ingest.mentions import MentionNames
from mapper.ingest.resolve import Resolver
from mapper.model import EdgeAttrs, EdgeKind, EvidenceKind, Location, NodeKind, Provenance

MAX_TEXT = 4000
INDEX_PAGES = ("README.md", "index.md")
SAMPLE = "code sample"  # the detail of a mention that is a call in a code sample


def needs_layer(page: DocPage) -> bool:
    """Pages asked "which layer?": no ``layer`` or ``component`` key (a component page takes
    its component's layer), not a scenario, not an index page."""
    fm = page.front_matter
    placed = "layer" in fm or "component" in fm or "scenario" in fm
    return not placed and not page.path.endswith(INDEX_PAGES)


def page_text(page: DocPage) -> str:
    """The text a page is classified (and indexed) by: title then the start of its body."""
    body = " ".join(s.heading + ". " + s.text for s in page.sections)
    return f"{page.title}. {body}"[:MAX_TEXT]


def build_docs(
    config: StackmapConfig,
    graph: MapGraph,
    resolver: Resolver,
    inputs: Inputs,
    placed: Mapping[str, tuple[str, float]],
) -> None:
    """``placed``: page path → (layer, similarity) for pages classified by embeddings."""
    layer_ids = {layer.id for layer in config.layers}
    owners = {c.page: c.id for c in declared_components(config, inputs.docs).values()}
    names = MentionNames(resolver)
    basenames: dict[str, list[str]] = {}  # a file's name → the paths of the files so named
    for node_id, _ in graph.nodes(NodeKind.FILE):
        file = node_id.removeprefix("file:")
        basenames.setdefault(posixpath.basename(file), []).append(file)
    for path in sorted(inputs.docs):
        page = inputs.docs[path]
        fm = page.front_matter
        layer = fm.get("layer") if fm.get("layer") in layer_ids else None
        if layer is None and isinstance(fm.get("component"), str):
            owner = graph.get(f"component:{fm['component']}")
            layer = owner.get("layer") if owner else None
        classified = placed.get(path)
        if layer is None and classified is not None:
            layer = classified[0]
        intro = next((s.text for s in page.sections if not s.anchor), "")
        page_id = f"doc:{path}"
        graph.add_node(
            page_id,
            NodeKind.DOC,
            page.title,
            layer=layer,
            path=path,
            line=1,
            page=path,
            anchor="",
            text=intro[:MAX_TEXT],
            component=fm.get("component"),
            scenario=fm.get("scenario"),
            front_matter=dict(fm),
            warnings=list(page.warnings),
        )
        where = Location(path, 1)
        doc = Provenance.DOC
        if fm.get("layer") in layer_ids:
            graph.add_edge(
                page_id, f"layer:{layer}", EdgeAttrs(EdgeKind.DESCRIBES, doc, location=where)
            )
        elif classified is not None:
            graph.add_edge(
                page_id,
                f"layer:{classified[0]}",
                EdgeAttrs(EdgeKind.DESCRIBES, Provenance.EMBEDDING, classified[1], where),
            )
        for section in page.sections:
            if not section.anchor:
                continue
            graph.add_node(
                section.node_id,
                NodeKind.DOC,
                section.heading,
                layer=layer,
                path=path,
                line=section.location.line,
                page=path,
                anchor=section.anchor,
                text=section.text[:MAX_TEXT],
                component=fm.get("component"),
                scenario=fm.get("scenario"),
            )
            graph.add_edge(page_id, section.node_id, EdgeAttrs(EdgeKind.CONTAINS, doc))
        _front_matter_edges(graph, resolver, page, page_id, owners.get(path))
        _mentions(graph, names, page, basenames)
        if isinstance(fm.get("scenario"), str) and fm["scenario"]:
            _scenario(graph, page, page_id)


def _names(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value if v is not None]
    return []


def _front_matter_edges(
    graph: MapGraph, resolver: Resolver, page: DocPage, page_id: str, owned: str | None
) -> None:
    fm, where, doc = page.front_matter, Location(page.path, 1), Provenance.DOC
    for comp in _names(fm.get("component")):
        graph.add_edge(
            page_id, f"component:{comp}", EdgeAttrs(EdgeKind.DESCRIBES, doc, location=where)
        )
    for iface in _names(fm.get("interfaces")):
        graph.add_edge(
            page_id, f"interface:{iface}", EdgeAttrs(EdgeKind.DESCRIBES, doc, location=where)
        )
    for name in _names(fm.get("symbols")):  # looked up as contract entries are
        node = resolver.named(name)
        if node is not None and node in graph:
            graph.add_edge(page_id, node, EdgeAttrs(EdgeKind.DESCRIBES, doc, location=where))
    if owned is None:
        return
    me = f"component:{owned}"
    for up in _names(fm.get("upstream")):
        graph.add_edge(f"component:{up}", me, EdgeAttrs(EdgeKind.CALLS, doc, location=where))
    for down in _names(fm.get("downstream")):
        graph.add_edge(me, f"component:{down}", EdgeAttrs(EdgeKind.CALLS, doc, location=where))


def _own_file(page: DocPage, name: str, basenames: Mapping[str, list[str]]) -> str:
    """``file:PATH`` of the one file named ``name`` among the page's front-matter ``paths``
    (``""`` for none or several)."""
    globs = _names(page.front_matter.get("paths"))
    if "/" in name or not globs:
        return ""
    patterns = [glob_regex(g) for g in globs]
    found = [p for p in basenames.get(name, ()) if any(r.match(p) for r in patterns)]
    return f"file:{found[0]}" if len(found) == 1 else ""


def _mentions(
    graph: MapGraph, names: MentionNames, page: DocPage, basenames: Mapping[str, list[str]]
) -> None:
    lines = [s.location.line or 0 for s in page.sections]
    ids = [s.node_id for s in page.sections]
    ordered = all(a <= b for a, b in itertools.pairwise(lines))
    page_id = f"doc:{page.path}"
    spans = [(name, where, "") for name, where in page.mentions]
    for name, where, detail in [*spans, *((n, w, SAMPLE) for n, w in page.samples)]:
        source = page_id  # the last section starting on or before the mention
        if where.line is not None:
            if ordered:
                i = bisect.bisect_right(lines, where.line)
                source = ids[i - 1] if i else page_id
            else:
                for line, node_id in zip(lines, ids, strict=True):
                    if line <= where.line:
                        source = node_id
        named = [f"{kind}:{name}" for kind in ("file", "interface", "component", "layer")]
        target = next((n for n in named if n in graph), "") or _own_file(page, name, basenames)
        if not target:
            sym = names.resolve(name)
            if sym is None:
                continue
            target = sym.node_id
        if source in graph:
            graph.link(
                source,
                target,
                EdgeKind.DESCRIBES,
                Provenance.DOC,
                0.9,
                where.path,
                where.line,
                evidence=EvidenceKind.DOC_MENTION,
                detail=detail,
            )


def _scenario(graph: MapGraph, page: DocPage, page_id: str) -> None:
    sid = f"scenario:{page.front_matter['scenario']}"
    if sid not in graph:
        steps = [
            {"order": s.order, "target": s.target, "action": s.action, "line": s.location.line}
            for s in page.steps
        ]
        graph.add_node(sid, NodeKind.SCENARIO, page.title, path=page.path, line=1, steps=steps)
    graph.add_edge(
        page_id, sid, EdgeAttrs(EdgeKind.DESCRIBES, Provenance.DOC, location=Location(page.path, 1))
    )
    for step in page.steps:
        graph.add_edge(
            sid,
            step.target,
            EdgeAttrs(
                EdgeKind.STEP,
                Provenance.DOC,
                location=step.location,
                extra=(("order", step.order), ("action", step.action)),
            ),
            key=f"step:{step.order}",
        )
