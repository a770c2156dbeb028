"""A whole ingest of the miniature repository without embeddings: nodes, edges, holes."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapper.errors import StoreError
from mapper.graph import MapGraph
from mapper.ingest import IngestReport, ingest, load_map
from mapper.ingest.store import Store
from mapper.model import EdgeKind, NodeKind


@pytest.fixture
def built(minirepo: Path) -> tuple[IngestReport, MapGraph]:
    report = ingest(minirepo, embed=False, progress=False)
    return report, load_map(minirepo)


def _edges(g: MapGraph, kind: EdgeKind) -> set[tuple[str, str]]:
    return {(s, d) for s, d, _ in g.edges(kind)}


def test_report_counts(built: tuple[IngestReport, MapGraph]) -> None:
    report, g = built
    assert report.version == 1 and not report.embedded
    assert report.files == {"code": 8, "contract": 2, "doc": 6, "proto": 1, "test": 1}
    assert len(report.parsed) == 18 and report.removed == () and report.skips == ()
    assert report.nodes == g.counts()["nodes"]
    assert report.nodes["layer"] == 3 and report.nodes["interface"] == 4
    stored = Store(Path(report.root) / ".stackmap").report()
    assert stored["version"] == 1 and stored["holes"] == report.to_dict()["holes"]


def test_layers_components_and_files(built: tuple[IngestReport, MapGraph]) -> None:
    _, g = built
    assert _edges(g, EdgeKind.ADJACENT) == {
        ("layer:compiler", "layer:runtime"),
        ("layer:runtime", "layer:driver"),
    }
    comps = {n: (d["layer"], d["declared"]) for n, d in g.nodes(NodeKind.COMPONENT)}
    assert comps == {
        "component:compiler.passes": ("compiler", True),
        "component:runtime.core": ("runtime", True),
        "component:compiler.ir": ("compiler", False),
        "component:runtime.add": ("runtime", False),
        "component:driver.mini_drv": ("driver", False),
        "component:driver.mini": ("driver", False),
    }
    contains = {(s, d): data["provenance"] for s, d, data in g.edges(EdgeKind.CONTAINS)}
    assert contains[("component:compiler.passes", "file:compiler/passes.py")] == "doc"
    assert contains[("component:compiler.ir", "file:compiler/ir.py")] == "inferred"
    assert contains[("layer:compiler", "file:compiler/__init__.py")] == "config"
    assert contains[("component:runtime.core", "file:runtime/runtime.h")] == "doc"
    assert g.node("symbol:compiler.passes.FusePass.fuse_pair")["component"] == "compiler.passes"


def test_calls_imports_and_component_dependencies(built: tuple[IngestReport, MapGraph]) -> None:
    _, g = built
    calls = {(s, d): data for s, d, data in g.edges(EdgeKind.CALLS)}
    assert (
        "symbol:compiler.passes.FusePass.run",
        "symbol:compiler.passes.FusePass.fuse_pair",
    ) in calls
    assert ("symbol:compiler.passes.compile_async", "symbol:compiler.ir.make_node") in calls
    assert ("symbol:compiler.passes.compile_async", "symbol:compiler.passes.FusePass.run") in calls
    c_call = calls[
        (
            "symbol:c:runtime/runtime.cpp:rt::Runtime::launch",
            "symbol:c:driver/mini_drv.c:mini_alloc_pages",
        )
    ]
    assert c_call["provenance"] == "tree-sitter" and c_call["line"] == 7
    assert ("symbol:c:kernels/add.cu:launch_add", "symbol:c:kernels/add.cu:add_kernel") in calls
    imports = _edges(g, EdgeKind.IMPORTS)
    assert ("file:compiler/passes.py", "file:compiler/ir.py") in imports
    assert ("file:runtime/runtime.h", "file:driver/mini_drv.h") in imports
    assert ("file:kernels/add.cu", "file:runtime/runtime.h") in imports
    lifted = {
        (s, d, data["provenance"])
        for s, d, data in g.edges()
        if s.startswith("component:") and d.startswith("component:")
    }
    assert lifted == {
        ("component:compiler.passes", "component:compiler.ir", "tree-sitter"),  # calls
        ("component:runtime.core", "component:driver.mini_drv", "tree-sitter"),
        ("component:runtime.add", "component:runtime.core", "tree-sitter"),  # include
        ("component:compiler.passes", "component:runtime.core", "doc"),  # upstream: list
    }


def test_interfaces_docs_scenarios_tests(built: tuple[IngestReport, MapGraph]) -> None:
    _, g = built
    alloc = g.node("interface:runtime_driver.alloc_pages")
    assert alloc["sync"] == "sync" and alloc["resolved"] and alloc["lower"] == "driver"
    implements = _edges(g, EdgeKind.IMPLEMENTS)
    assert implements == {
        ("symbol:c:driver/mini_drv.c:mini_alloc_pages", "interface:runtime_driver.alloc_pages"),
        ("symbol:c:driver/mini_drv.c:mini_free_pages", "interface:runtime_driver.free_pages"),
        ("symbol:proto:mini.v1.Driver.Alloc", "interface:runtime_driver.alloc_rpc"),
        ("symbol:c:runtime/runtime.cpp:rt::Runtime::launch", "interface:compiler_runtime.launch"),
    }
    provides, consumes = _edges(g, EdgeKind.PROVIDES), _edges(g, EdgeKind.CONSUMES)
    assert ("component:driver.mini_drv", "interface:runtime_driver.alloc_pages") in provides
    assert ("layer:driver", "interface:runtime_driver.alloc_pages") in provides
    assert ("component:runtime.core", "interface:runtime_driver.alloc_pages") in consumes
    assert ("layer:runtime", "interface:runtime_driver.alloc_pages") in consumes
    describes = {(s, d): data for s, d, data in g.edges(EdgeKind.DESCRIBES)}
    assert ("doc:docs/compiler/passes.md", "component:compiler.passes") in describes
    assert ("doc:docs/compiler/passes.md", "interface:compiler_runtime.launch") in describes
    mention = describes[("doc:docs/compiler/passes.md#fusion", "symbol:compiler.ir.make_node")]
    assert mention["confidence"] == 0.9 and mention["line"] == 17
    assert ("doc:docs/runtime/core.md#runtime-core", "file:runtime/runtime.cpp") in describes
    assert ("doc:docs/runtime/core.md#memory", "interface:runtime_driver.alloc_pages") in describes
    assert ("doc:docs/runtime/core.md#memory", "component:compiler.passes") in describes
    steps = sorted((d["order"], t) for s, t, d in g.edges(EdgeKind.STEP))
    assert steps == [
        (1, "component:compiler.passes"),
        (2, "interface:compiler_runtime.launch"),
        (3, "component:runtime.core"),
    ]
    test = "test:tests/check_passes.py::test_fuse_renames"
    assert [n for n, _ in g.nodes(NodeKind.TEST)] == [test]
    covers = {d for s, d, _ in g.edges(EdgeKind.COVERS) if s == test}
    assert covers == {
        "symbol:compiler.ir.make_node",
        "symbol:compiler.passes.FusePass",
        "symbol:compiler.passes.FusePass.run",
        "component:compiler.ir",
        "component:compiler.passes",
    }


def test_holes_answer_the_three_questions(built: tuple[IngestReport, MapGraph]) -> None:
    report, g = built
    assert {(h.node, h.missing) for h in report.holes} == {
        ("component:compiler.ir", ("downstream",)),
        ("component:runtime.add", ("upstream",)),
        ("component:driver.mini_drv", ("downstream",)),
        ("component:driver.mini", ("upstream", "downstream")),
        ("doc:notes/lunch.md", ("layer",)),
        ("doc:notes/memory-release.md", ("layer",)),
    }
    lunch = next(h for h in report.holes if h.node == "doc:notes/lunch.md")
    assert "embeddings off" in lunch.reason
    assert g.node("component:driver.mini")["hole"]["missing"] == ["upstream", "downstream"]
    assert "hole" not in g.node("component:runtime.core")
    assert g.node("component:runtime.core")["upstream"] == [
        "component:compiler.passes",
        "component:runtime.add",
    ]


def test_load_map_without_ingest(minirepo: Path) -> None:
    with pytest.raises(StoreError, match="run `stackmap ingest`"):
        load_map(minirepo)


def test_component_page_without_layer_takes_its_components_layer(minirepo: Path) -> None:
    page = minirepo / "docs" / "runtime" / "core.md"
    page.write_text(page.read_text().replace("layer: runtime\n", ""))
    report = ingest(minirepo, embed=False, progress=False)
    graph = load_map(minirepo)
    assert graph.node("doc:docs/runtime/core.md")["layer"] == "runtime"  # from the id prefix
    assert graph.node("component:runtime.core")["layer"] == "runtime"
    assert "doc:docs/runtime/core.md" not in {h.node for h in report.holes}


def test_inherited_and_super_calls_resolve_to_the_base_method(
    built: tuple[IngestReport, MapGraph],
) -> None:
    _, g = built
    calls = _edges(g, EdgeKind.CALLS)
    # FusePass.run calls super().run(...): Pass.run, found through the class's bases
    assert ("symbol:compiler.passes.FusePass.run", "symbol:compiler.passes.Pass.run") in calls


def test_a_bare_file_name_describes_the_one_file_so_named_among_the_pages_paths(
    minirepo: Path,
) -> None:
    """``runtime.h`` on a page about ``runtime/**`` is ``runtime/runtime.h``; ``mini_drv.c``
    lies outside the page's paths and ``util.h`` names two files there: neither is an edge."""
    (minirepo / "runtime" / "extra").mkdir()
    for folder in ("runtime", "runtime/extra"):
        (minirepo / folder / "util.h").write_text("int util(void);\n", encoding="utf-8")
    page = minirepo / "docs" / "runtime" / "core.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(text + "\nDeclared in `runtime.h`, beside `util.h`; see `mini_drv.c`.\n")
    ingest(minirepo, embed=False, progress=False)
    g = load_map(minirepo)
    described = {
        (d, data["line"], data["evidence"][0][0])
        for s, d, data in g.edges(EdgeKind.DESCRIBES)
        if s == "doc:docs/runtime/core.md#memory" and d.startswith("file:")
    }
    assert described == {("file:runtime/runtime.h", 17, "doc_mention")}
