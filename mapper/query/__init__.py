"""The query API every map feature builds on: open a map once, then ask it questions.

Impact analysis, scenario walks, the agent, the web UI and the check are thin layers over
this package. Every answer is made of typed records (:class:`~mapper.model.Node`,
:class:`~mapper.model.Edge` with all its :class:`~mapper.model.Evidence`), and every path comes
hop by hop with a citation (``path:line`` and evidence kind), so a feature can always show why.

Examples, on the miniature repository of the tests (``tests/mapper/fixtures/minirepo``) after
``stackmap ingest``; ``tests/mapper/query/test_examples.py`` runs them::

    >>> from mapper.query import EdgeKind, open_map
    >>> m = open_map(root)                       # cached: the same object until a new ingest
    >>> m.node("interface:runtime_driver.free_pages").kind
    <NodeKind.INTERFACE: 'interface'>
    >>> m.resolve("runtime_driver.free_pages")   # an id may leave out its kind
    'interface:runtime_driver.free_pages'
    >>> m.layers()
    ['compiler', 'runtime', 'driver']
    >>> for n in m.interfaces_between("runtime", "driver"):
    ...     print(n.id, n.get("sync"))
    interface:runtime_driver.alloc_pages sync
    interface:runtime_driver.alloc_rpc sync
    interface:runtime_driver.free_pages sync
    >>> [e.source for e in m.implementations("interface:runtime_driver.free_pages")]
    ['symbol:c:driver/mini_drv.c:mini_free_pages']
    >>> sorted(e.source for e in m.providers("interface:runtime_driver.free_pages"))
    ['component:driver.mini_drv', 'layer:driver']
    >>> for e in m.consumers("interface:runtime_driver.free_pages"):
    ...     print(e.source, e.citation.cite())
    layer:runtime contracts/runtime_driver.yaml:21 (contract)
    component:runtime.core runtime/runtime.cpp:12 (code_reference)

A declared dependency and an observed one are evidence on the same edge::

    >>> (e,) = m.neighbours("component:compiler.passes", {EdgeKind.CALLS}, "out")[:1]
    >>> e.target, [x.cite() for x in e.declared()]    # what the map says
    ('component:compiler.ir', ['docs/compiler/passes.md:1 (doc_front_matter)'])
    >>> [x.cite() for x in e.observed()]             # what the code says
    ['compiler/passes.py:28 (code_reference)', 'compiler/passes.py:32 (code_reference)']

Explanation paths cite every hop; changed lines map to the definitions they touch::

    >>> (path,) = m.paths("component:compiler.passes", "interface:runtime_driver.alloc_pages")
    >>> for hop in path.hops:
    ...     print(hop.start, hop.edge.kind.value, hop.end)
    ...     print("   ", hop.citation.cite())
    component:compiler.passes calls component:runtime.core
        docs/runtime/core.md:1 (doc_front_matter)
    component:runtime.core consumes interface:runtime_driver.alloc_pages
        runtime/runtime.cpp:7 (code_reference)
    >>> for n in m.nodes_touched("runtime/runtime.cpp", [(8, 12)]):
    ...     print(n.name, n.line, n.get("end_line"))
    rt::Runtime::release 12 12
    rt::Runtime::launch 6 10
    >>> for hole in m.holes()[:2]:
    ...     print(hole.node, hole.missing)
    component:compiler.ir ('downstream',)
    component:driver.mini ('upstream', 'downstream')
    >>> [(f.rule, f.nodes) for f in m.findings("interface:runtime_driver.free_pages")]
    [('SM401', ('interface:runtime_driver.free_pages',))]
"""

from __future__ import annotations

from mapper.errors import MapNotIngested, StoreCorrupt, StoreOutdated
from mapper.model import Edge, EdgeKind, Evidence, EvidenceKind, Hole, Node, NodeKind
from mapper.query.load import open_edges, open_map, read_map
from mapper.query.map import Direction, Map
from mapper.query.paths import ExplanationPath, Hop

__all__ = [
    "Direction",
    "Edge",
    "EdgeKind",
    "Evidence",
    "EvidenceKind",
    "ExplanationPath",
    "Hole",
    "Hop",
    "Map",
    "MapNotIngested",
    "Node",
    "NodeKind",
    "StoreCorrupt",
    "StoreOutdated",
    "open_edges",
    "open_map",
    "read_map",
]
