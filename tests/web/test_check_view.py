"""The Check page and role findings over a map with drift (the miniature repository has
nine findings): groups by layer, rule and classification add up to the report."""

from __future__ import annotations

from collections import Counter

from fastapi.testclient import TestClient

from mapper.check import run_check
from web.app import create_app
from web.data import MapData


def test_check_groups_add_up_to_the_report(mini_map: MapData) -> None:
    client = TestClient(create_app(mini_map), base_url="http://127.0.0.1")
    report = run_check(mini_map.root, config=mini_map.config)
    body = client.get("/api/check").json()
    assert body["total"] == len(report.findings) == 9
    assert [(g["key"], g["count"]) for g in body["by_layer"]] == [
        (layer, len(found)) for layer, found in report.by_layer()
    ]
    assert {g["key"]: g["count"] for g in body["by_rule"]} == dict(
        Counter(f.rule for f in report.findings)
    )
    assert {g["key"]: g["count"] for g in body["by_classification"]} == dict(
        Counter(f.classification.value for f in report.findings)
    )
    page = client.get("/check").text
    assert '<p class="summary" id="check-total">9 findings (5 error, 4 warning, 0 note)' in page
    assert page.count('<details class="group" open>') == (
        len(body["by_layer"]) + len(body["by_rule"]) + len(body["by_classification"])
    )


def test_role_view_lists_the_findings_of_its_layers(mini_map: MapData) -> None:
    client = TestClient(create_app(mini_map), base_url="http://127.0.0.1")
    report = run_check(mini_map.root, config=mini_map.config)
    view = client.get("/api/roles/compiler").json()
    mine = [f.fingerprint for f in report.findings if f.layer in ("compiler", "runtime")]
    assert [f["fingerprint"] for f in view["findings"]] == mine
    assert view["changes"] == []
    assert "git" in view["changes_error"]  # the copy is not a git repository: say so
