"""The map of this repository's own reference stack: every component answers the three
questions (layer, upstream, downstream), and registrations by decorator are on the map.

Without embeddings, docs lacking a layer cannot be classified; those are left to the embedded
ingest (``make demo``) and are not asserted here.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from mapper.cli.map_cmd import show_record
from mapper.config import StackmapConfig, load_config
from mapper.ingest import IngestReport, ingest
from mapper.ingest.store import Store
from mapper.model import EdgeKind, NodeKind

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[StackmapConfig, IngestReport]:
    store = tmp_path_factory.mktemp("repo-map") / "store"
    config = dataclasses.replace(load_config(REPO), store=str(store))
    return config, ingest(REPO, config, embed=False, progress=False)


def test_reference_stack_has_no_component_holes(
    built: tuple[StackmapConfig, IngestReport],
) -> None:
    config, report = built
    assert report.skips == ()
    component_holes = [h for h in report.holes if h.node.startswith("component:")]
    assert component_holes == [], "\n".join(f"{h.node}: {h.reason}" for h in component_holes)
    graph = Store(config.store_path).load_graph()
    layers = [n for n, _ in graph.nodes(NodeKind.LAYER)]
    assert layers == [f"layer:{layer.id}" for layer in config.layers]
    assert all(data.get("layer") for _, data in graph.nodes(NodeKind.COMPONENT))


def test_show_lists_every_op_registration_with_its_location(
    built: tuple[StackmapConfig, IngestReport],
) -> None:
    config, _ = built
    written = {  # every @register(...) line of the adapter, read as text
        (path.relative_to(REPO).as_posix(), number)
        for path in sorted((REPO / "stack" / "adapter").glob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*@register\(", line)
    }
    node, out, _ = show_record(REPO, "stack.adapter.registry.register", config)
    assert node.id == "symbol:stack.adapter.registry.register"
    shown = {(ev.path, ev.line) for e in out if e.kind is EdgeKind.REGISTERS for ev in e.evidence}
    assert written and shown == written


def test_operator_modules_show_with_their_descriptors(
    built: tuple[StackmapConfig, IngestReport],
) -> None:
    """Every built-in operator descriptor file is an ``operator`` symbol of component
    kmd.opmod, defined by its file, carrying the kernel and version it declares."""
    config, _ = built
    graph = Store(config.store_path).load_graph()
    files = sorted((REPO / "stack" / "kmd" / "opmod" / "builtin").glob("*.opdesc.json"))
    operators = {
        node: data
        for node, data in graph.nodes(NodeKind.SYMBOL)
        if data.get("symbol_kind") == "operator"
    }
    assert sorted(operators) == sorted(
        f"symbol:opdesc:stack.kmd.opmod.builtin.{p.name.removesuffix('.opdesc.json')}"
        for p in files
    )
    assert {data.get("component") for data in operators.values()} == {"kmd.opmod"}
    gemm = operators["symbol:opdesc:stack.kmd.opmod.builtin.gemm"]
    assert gemm["value"] == "GEMM@1.0.0" and gemm["path"].endswith("gemm.opdesc.json")
