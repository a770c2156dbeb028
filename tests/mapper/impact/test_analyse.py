"""Impact on the fixture stack: known affected sets in both modes, each item explained."""

from __future__ import annotations

from pathlib import Path

from mapper.impact import Affected, Category, ImpactReport, MapView, Mode, impact_of

ALLOC_PRECISE = {
    ("consumer", "component:umd.session"),
    ("contract", "contract:umd_kmd.alloc"),
    ("implementation", "symbol:fx.kmd.device.Device.alloc"),
    ("definition", "file:fx/kmd/device.py"),
    ("caller", "symbol:fx.umd.session.Session.submit"),
    ("test", "test:tests/test_device.py::test_alloc_pads_to_alignment"),
    ("doc", "doc:knowledge_base/kmd/device.md"),
    ("doc", "doc:knowledge_base/umd/session.md"),
    ("scenario_step", "scenario:submit#9"),
}
ALLOC_CONSERVATIVE_ONLY = {
    ("caller", "symbol:fx.runtime.engine.Engine.run"),
    ("test", "test:tests/test_engine.py::test_run_returns_an_address"),
    ("importer", "file:fx/umd/session.py"),
    ("importer", "file:fx/runtime/engine.py"),
    ("doc", "doc:knowledge_base/umd/session.md#umd-session"),
    ("doc", "doc:knowledge_base/runtime/engine.md#runtime-engine"),
}
SUBMIT_PRECISE = {
    ("definition", "file:fx/umd/session.py"),
    ("caller", "symbol:fx.runtime.engine.Engine.run"),
    ("interface", "interface:runtime_umd.submit"),
    ("contract", "contract:runtime_umd.submit"),
    ("consumer", "component:runtime.engine"),
    ("test", "test:tests/test_engine.py::test_run_returns_an_address"),
    ("doc", "doc:knowledge_base/runtime/engine.md"),
    ("doc", "doc:knowledge_base/umd/session.md"),
    ("doc", "doc:knowledge_base/umd/session.md#umd-session"),  # names it in a code span
    ("scenario_step", "scenario:submit#7"),
}


def items(report: ImpactReport) -> set[tuple[str, str]]:
    return {(a.category.value, a.node) for a in report.affected}


def assert_explained(report: ImpactReport) -> None:
    """Every item carries a cited path from a changed node, hop after connected hop."""
    seeds = {c.node for c in report.changed}
    for item in report.affected:
        assert item.why, f"{item.node} has no explanation path"
        first = item.why[0]
        at = first.source if first.forward else first.target
        assert at in seeds, (item.node, at)
        for hop in item.why:
            tail, head = (hop.source, hop.target) if hop.forward else (hop.target, hop.source)
            assert tail == at, (item.node, hop)
            assert hop.path and hop.line, (item.node, hop)
            at = head
        assert at == _end(item), (item.node, at)


def _end(item: Affected) -> str:
    if item.category is Category.CONTRACT:
        return f"file:{item.path}"
    return item.node.partition("#")[0] if item.category is Category.SCENARIO_STEP else item.node


def test_interface_precise(view: MapView, stack: Path) -> None:
    report = impact_of(view, stack, "interface:umd_kmd.alloc", mode=Mode.PRECISE)
    assert items(report) == ALLOC_PRECISE
    assert_explained(report)
    caller = next(a for a in report.affected if a.node.endswith("Session.submit"))
    assert [(h.edge, h.cite(), h.evidence.value) for h in caller.why] == [
        ("implements", "contracts/umd_kmd.yaml:8", "contract"),
        ("calls", "fx/umd/session.py:11", "code_reference"),
    ]
    assert [c.node for c in report.changed] == ["interface:umd_kmd.alloc"]


def test_interface_conservative_adds_plausible_edges(view: MapView, stack: Path) -> None:
    report = impact_of(view, stack, "interface:umd_kmd.alloc", mode=Mode.CONSERVATIVE)
    assert items(report) == ALLOC_PRECISE | ALLOC_CONSERVATIVE_ONLY
    assert_explained(report)
    weakest = {a.node: a.weakest.value for a in report.affected}
    assert weakest["file:fx/runtime/engine.py"] == "import"
    assert weakest["doc:knowledge_base/runtime/engine.md#runtime-engine"] == "doc_mention"
    ranks = [a.rank_key()[0] for a in report.affected]
    assert ranks == sorted(ranks)  # most certain evidence first


def test_path_line_names_the_innermost_definition(view: MapView, stack: Path) -> None:
    report = impact_of(view, stack, "fx/umd/session.py:11", mode=Mode.PRECISE)
    assert [c.node for c in report.changed] == ["symbol:fx.umd.session.Session.submit"]
    assert items(report) == SUBMIT_PRECISE
    assert_explained(report)
    assert [f.path for f in report.files][:2] == ["fx/umd/session.py", "fx/runtime/engine.py"]
    assert report.effort.layers == ("runtime", "umd")
    assert report.effort.files == 7


def test_contract_entry_is_a_target(view: MapView, stack: Path) -> None:
    by_entry = impact_of(view, stack, "umd_kmd.alloc")
    by_id = impact_of(view, stack, "interface:umd_kmd.alloc")
    assert items(by_entry) == items(by_id) == ALLOC_PRECISE


def test_json_carries_paths_and_ranked_files(view: MapView, stack: Path) -> None:
    data = impact_of(view, stack, "interface:umd_kmd.alloc").to_json()
    assert {"changed", "affected", "files", "tests", "docs", "effort"} <= set(data)
    for item in data["affected"]:
        assert {"path", "line", "layer", "why"} <= set(item)
        assert item["why"] and all(h["at"] and h["evidence"] for h in item["why"])
    assert data["tests"] == ["test:tests/test_device.py::test_alloc_pads_to_alignment"]
    assert data["contracts"] == ["contract:umd_kmd.alloc"]
    assert len(data["files"]) == 7


def test_constructor_change_reaches_its_class_pages(view: MapView, stack: Path) -> None:
    report = impact_of(view, stack, "fx/runtime/engine.py:7", mode=Mode.PRECISE)
    assert [c.node for c in report.changed] == ["symbol:fx.runtime.engine.Engine.__init__"]
    assert_explained(report)
    (page,) = [a for a in report.affected if a.category is Category.DOC]
    assert page.node == "doc:knowledge_base/runtime/engine.md"
    assert [(h.edge, h.cite(), h.evidence.value) for h in page.why] == [
        ("contains", "fx/runtime/engine.py:7", "definition"),
        ("describes", "knowledge_base/runtime/engine.md:1", "doc_front_matter"),
    ]
