"""``scenario check``: scenario page steps against the code and the derived walks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mapper.impact import MapView
from mapper.scenarios.pages import check_pages

STACKMAP = Path(sys.executable).parent / "stackmap"


def test_toy_page_with_stale_steps(toy_view: MapView) -> None:
    found = [(f.rule, f.line, f.target) for f in check_pages(toy_view)]
    assert found == [
        ("missing", 7, "component:back.gone"),
        ("no-footprint", 6, "component:mid.plan"),
        ("unwalked-layer", 1, None),
    ]
    messages = [f.message for f in check_pages(toy_view)]
    assert messages[0] == "step 3 names component:back.gone, which the map no longer holds"
    assert messages[2] == ("the code holds relu in back (relu, RELU) but no step goes there")


def test_cli_exit_status(toy: Path) -> None:
    proc = subprocess.run(
        [str(STACKMAP), "scenario", "check", "--root", str(toy), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1
    assert [f["rule"] for f in json.loads(proc.stdout)] == [
        "missing",
        "no-footprint",
        "unwalked-layer",
    ]


def test_reference_stack_pages_are_supported(repo_view: MapView) -> None:
    assert [f.to_json() for f in check_pages(repo_view)] == []
