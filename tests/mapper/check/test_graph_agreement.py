"""Graph and check agree: every contract interface is resolved on the graph (an ``implements``
edge) or reported by the check on its node, never neither."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from mapper.check import run_check
from mapper.config import StackmapConfig, load_config
from mapper.ingest.contracts import load_contracts
from mapper.query import open_map

REPO = Path(__file__).resolve().parents[3]


def _unaccounted(root: Path, config: StackmapConfig) -> tuple[int, list[str]]:
    """(interfaces in the contracts, those neither implemented on the graph nor reported)."""
    report = run_check(root, config=config, history=False)
    reported = {node for f in report.findings for node in f.nodes}
    m = open_map(root, config)
    ids = [f"interface:{spec.id}" for c in load_contracts(root, config) for spec in c.interfaces]
    missing = [i for i in ids if not m.implementations(i) and i not in reported]
    return len(ids), missing


def test_every_interface_of_this_repository_is_implemented_or_reported(tmp_path: Path) -> None:
    config = dataclasses.replace(load_config(REPO), store=str(tmp_path / "store"))
    count, missing = _unaccounted(REPO, config)
    assert count  # the repository has contracts
    assert missing == []


@pytest.mark.parametrize(
    "edit",
    [
        None,
        ("fx/kmd/device.py", "    def free(self, va: int) -> None:\n        return None\n", ""),
        ("contracts/umd_kmd.yaml", "symbol: kmd_ring", "symbol: kmd_ring_gone"),
    ],
    ids=["clean", "implementation-deleted", "contract-names-a-missing-symbol"],
)
def test_every_fixture_interface_is_implemented_or_reported(
    clean_copy: Path, edit: tuple[str, str, str] | None
) -> None:
    if edit is not None:
        path, old, new = edit
        text = (clean_copy / path).read_text(encoding="utf-8")
        assert old in text
        (clean_copy / path).write_text(text.replace(old, new), encoding="utf-8")
    config = load_config(clean_copy)
    count, missing = _unaccounted(clean_copy, config)
    assert (count, missing) == (9, [])
    if edit is not None:  # the drifted interface is on the graph without an implementation
        m = open_map(clean_copy, config)
        gone = "interface:umd_kmd.free" if "free" in edit[1] else "interface:umd_kmd.ring"
        assert m.implementations(gone) == []
        assert gone in {n for f in m.findings(gone) for n in f.nodes}
