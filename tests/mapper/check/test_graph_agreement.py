"""Graph and check agree: a contract interface without an ``implements`` edge on the graph is
exactly one SM101 reports (the check asks the graph), and every other one has exactly one; a
page's front-matter symbol is a ``describes`` edge on the graph exactly when SM301 accepts it
(the two look it up with one resolver)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from mapper.check import run_check
from mapper.config import StackmapConfig, load_config
from mapper.ingest.contracts import load_contracts
from mapper.model import EdgeKind, NodeKind
from mapper.query import open_map

REPO = Path(__file__).resolve().parents[3]


def _accounts(root: Path, config: StackmapConfig) -> tuple[list[str], list[str], list[str]]:
    """(the contract interfaces, those without exactly one ``implements`` edge on the graph,
    those SM101 reports unimplemented), each by node id."""
    report = run_check(root, config=config, history=False)
    m = open_map(root, config)
    ids = [f"interface:{spec.id}" for c in load_contracts(root, config) for spec in c.interfaces]
    declared = [n.id for n in m.nodes(NodeKind.INTERFACE) if n.get("source") != "discovered"]
    assert sorted(ids) == sorted(declared)  # one node per contract entry, and no other
    unimplemented = [i for i in ids if len(m.implementations(i)) != 1]
    reported = [i for f in report.findings if f.rule == "SM101" for i in f.nodes if i in ids]
    return ids, unimplemented, reported


def test_every_interface_of_this_repository_is_implemented(tmp_path: Path) -> None:
    config = dataclasses.replace(load_config(REPO), store=str(tmp_path / "store"))
    ids, unimplemented, reported = _accounts(REPO, config)
    assert len(ids) == len(set(ids))  # one contract entry per interface id
    assert (unimplemented, reported) == ([], [])


@pytest.mark.parametrize(
    ("edit", "gone"),
    [
        (None, []),
        (
            ("fx/kmd/device.py", "    def free(self, va: int) -> None:\n        return None\n", ""),
            ["interface:umd_kmd.free"],
        ),
        (
            ("contracts/umd_kmd.yaml", "symbol: kmd_ring", "symbol: kmd_ring_gone"),
            ["interface:umd_kmd.ring"],
        ),
    ],
    ids=["clean", "implementation-deleted", "contract-names-a-missing-symbol"],
)
def test_the_graph_and_the_check_agree_on_every_fixture_interface(
    clean_copy: Path, edit: tuple[str, str, str] | None, gone: list[str]
) -> None:
    if edit is not None:
        path, old, new = edit
        text = (clean_copy / path).read_text(encoding="utf-8")
        assert old in text
        (clean_copy / path).write_text(text.replace(old, new), encoding="utf-8")
    config = load_config(clean_copy)
    ids, unimplemented, reported = _accounts(clean_copy, config)
    assert (len(ids), unimplemented, reported) == (9, gone, gone)
    for interface in gone:  # on the graph, without an implementation, carrying the finding
        m = open_map(clean_copy, config)
        assert m.implementations(interface) == []
        assert [f.rule for f in m.findings(interface) if f.rule == "SM101"] == ["SM101"]


def _inherit_and_reexport(clean_copy: Path, exported: str) -> None:
    """The fixture's Device inherits ``close`` from a new fx.kmd.base.Base, and the package
    fx.kmd imports ``exported`` (``*`` or a name) from fx.kmd.device."""
    (clean_copy / "fx/kmd/base.py").write_text(
        "class Base:\n    def close(self) -> None:\n        return None\n", encoding="utf-8"
    )
    device = clean_copy / "fx/kmd/device.py"
    text = device.read_text(encoding="utf-8")
    device.write_text(
        text.replace("class Device:", "from fx.kmd.base import Base\n\n\nclass Device(Base):"),
        encoding="utf-8",
    )
    (clean_copy / "fx/kmd/__init__.py").write_text(f"from fx.kmd.device import {exported}\n")


@pytest.mark.parametrize(
    ("symbol", "implementer"),
    [
        ("fx.kmd.Device.alloc", "symbol:fx.kmd.device.Device.alloc"),  # through `import *`
        ("fx.kmd.device.Device.close", "symbol:fx.kmd.base.Base.close"),  # inherited
        ("fx.umd.session.Session.device", "symbol:fx.umd.session.Session"),  # self.device = …
    ],
    ids=["star-import", "inherited-member", "instance-attribute"],
)
def test_names_the_check_accepts_are_implemented_on_the_graph(
    clean_copy: Path, symbol: str, implementer: str
) -> None:
    _inherit_and_reexport(clean_copy, "*")
    contract = clean_copy / "contracts/umd_kmd.yaml"
    text = contract.read_text(encoding="utf-8")
    assert text.count("symbol: fx.kmd.device.Device.alloc\n") == 1
    contract.write_text(text.replace("symbol: fx.kmd.device.Device.alloc\n", f"symbol: {symbol}\n"))
    config = load_config(clean_copy)
    ids, unimplemented, reported = _accounts(clean_copy, config)
    assert (len(ids), unimplemented, reported) == (9, [], [])
    m = open_map(clean_copy, config)
    assert [e.source for e in m.implementations("interface:umd_kmd.alloc")] == [implementer]


@pytest.mark.parametrize(
    ("named", "described"),
    [
        ("fx.kmd.device.Device", "symbol:fx.kmd.device.Device"),
        ("fx.kmd.Device", "symbol:fx.kmd.device.Device"),  # re-exported by the package
        ("fx.kmd.device.Device.close", "symbol:fx.kmd.base.Base.close"),  # inherited
        ("fx.kmd.device", "file:fx/kmd/device.py"),  # a module: its file
        ("fx.kmd.Gone", None),  # the check reports it, and the graph has no edge
    ],
    ids=["qualname", "re-export", "inherited-member", "module", "missing"],
)
def test_a_front_matter_symbol_the_check_accepts_is_described_on_the_graph(
    clean_copy: Path, named: str, described: str | None
) -> None:
    _inherit_and_reexport(clean_copy, "Device")
    page = clean_copy / "knowledge_base/kmd/device.md"
    text = page.read_text(encoding="utf-8")
    assert text.count("symbols: [fx.kmd.device.Device]\n") == 1
    page.write_text(text.replace("symbols: [fx.kmd.device.Device]\n", f"symbols: [{named}]\n"))
    config = load_config(clean_copy)
    report = run_check(clean_copy, config=config, history=False)
    dangling = [f.subject for f in report.findings if f.rule == "SM301"]
    m = open_map(clean_copy, config)
    on_graph = [
        e.target
        for e in m.neighbours("doc:knowledge_base/kmd/device.md", {EdgeKind.DESCRIBES}, "out")
        if e.target.startswith(("symbol:", "file:"))
    ]
    if described is None:
        assert (dangling, on_graph) == ([f"knowledge_base/kmd/device.md:{named}"], [])
    else:
        assert (dangling, on_graph) == ([], [described])


def test_every_front_matter_symbol_of_this_repository_is_described_on_the_graph(
    tmp_path: Path,
) -> None:
    """The check reports no page here naming a missing symbol, so each front-matter entry
    (read from the pages themselves) is a ``describes`` edge from its page to a symbol of that
    name, re-exported ones included."""
    config = dataclasses.replace(load_config(REPO), store=str(tmp_path / "store"))
    report = run_check(REPO, config=config, history=False)
    assert [f.subject for f in report.findings if f.rule == "SM301"] == []
    m = open_map(REPO, config)
    named, undescribed = 0, []
    for path in sorted((REPO / "knowledge_base").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        if not text.startswith("---\n"):
            continue
        front = yaml.safe_load(text.split("---\n", 2)[1]) or {}
        page = f"doc:{path.relative_to(REPO).as_posix()}"
        described = {
            e.target.rsplit(".", 1)[-1]
            for e in m.neighbours(page, {EdgeKind.DESCRIBES}, "out")
            if e.target.startswith("symbol:")
        }
        names = front.get("symbols") or []
        named += len(names)
        undescribed += [(page, n) for n in names if n.rsplit(".", 1)[-1] not in described]
    assert named and undescribed == []
