"""The HTML pages over this repository's map, and errors a person can act on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from mapper.ingest import ingest
from web.app import create_app
from web.data import MapData


def test_home_lists_layers_and_roles(client: TestClient) -> None:
    page = client.get("/").text
    for layer in ("adapter", "compiler", "runtime", "umd", "kmd"):
        assert f'href="/nodes/layer:{layer}"' in page
    assert re.findall(r'data-role="(\w+)"', page) == ["compiler", "runtime", "driver"]


def test_ask_page_shows_the_answer_with_citations(client: TestClient, repo_map: MapData) -> None:
    page = client.get("/ask", params={"q": "what changes to add a quantize op"}).text
    assert '<section class="answer" id="answer" data-intent="new_op">' in page
    _, scenario = repo_map.node_record("scenario:new-op-quantize")
    cited = len(scenario["steps"]) + 1  # the scenario page, then one citation per step
    assert len(re.findall(r'<li class="citation"', page)) == cited
    assert page.count('<span class="ln hit">') == cited  # one highlighted line per citation
    assert 'href="/nodes/component:compiler.quantize"' in page


def test_ask_page_without_a_question_is_just_the_form(client: TestClient) -> None:
    page = client.get("/ask").text
    assert 'name="q"' in page and 'id="answer"' not in page


def test_map_page_embeds_its_graph_as_json(client: TestClient) -> None:
    page = client.get("/map").text
    assert '<script type="application/json" id="graph-data">' in page
    assert '<script src="/static/vendor/cytoscape/cytoscape.min.js" defer></script>' in page


def test_node_page_shows_contract_excerpt_and_edges(client: TestClient, repo_map: MapData) -> None:
    page = client.get("/nodes/interface:umd_kmd.free").text
    assert "<h2>Contract</h2>" in page
    assert "The UMD (caller) is responsible" in page
    _, node = repo_map.node_record("interface:umd_kmd.free")
    assert f'<span class="ln hit"><span class="n">{node["line"]}</span>' in page
    assert 'href="/nodes/component:umd.session"' in page


@pytest.mark.parametrize(
    "kind_id",
    [
        "layer:runtime",
        "component:kmd.memory",
        "interface:runtime_umd.op_kind_enum",
        "scenario:matmul-walk",
    ],
)
def test_detail_page_for_each_kind(client: TestClient, kind_id: str) -> None:
    response = client.get(f"/nodes/{kind_id}")
    assert response.status_code == 200
    assert f"<code>{kind_id}</code>" in response.text


def test_check_page(client: TestClient, repo_map: MapData) -> None:
    page = client.get("/check").text
    total = len(repo_map.check().findings)
    assert f'<p class="summary" id="check-total">{total} findings' in page


def test_role_pages(client: TestClient) -> None:
    for role, title in (
        ("compiler", "Compiler engineer"),
        ("runtime", "Runtime engineer"),
        ("driver", "Driver engineer"),
    ):
        page = client.get(f"/roles/{role}").text
        assert f"<h1>{title}</h1>" in page
        assert f'<input type="hidden" name="role" value="{role}">' in page
        for section in ("interfaces", "scenarios", "findings", "holes", "changes"):
            assert f'id="{section}"' in page


def test_unknown_node_page_offers_suggestions(client: TestClient) -> None:
    response = client.get("/nodes/umd_kmd.fre")
    assert response.status_code == 404
    assert 'data-error="unknown-node"' in response.text


def test_unknown_page_is_a_404_page(client: TestClient) -> None:
    response = client.get("/nowhere")
    assert response.status_code == 404
    assert 'data-error="http-404"' in response.text


def test_map_not_ingested_names_the_command(mini_root: Path) -> None:
    client = TestClient(create_app(MapData(mini_root)), base_url="http://127.0.0.1")
    api = client.get("/api/graph")
    assert api.status_code == 503
    assert api.json() == {
        "error": "map-not-ingested",
        "message": "no map has been built for this repository yet",
        "command": f"stackmap ingest {mini_root.resolve()}",
    }
    page = client.get("/map")
    assert page.status_code == 503
    assert f'<code class="cmd">stackmap ingest {mini_root.resolve()}</code>' in page.text


def test_empty_map(tmp_path: Path) -> None:
    (tmp_path / "stackmap.toml").write_text(
        '[stackmap]\nname = "empty"\nstore = ".stackmap"\n\n'
        '[[layers]]\nid = "top"\nname = "Top"\npaths = ["top/**"]\ndescription = "none"\n',
        encoding="utf-8",
    )
    ingest(tmp_path, embed=False, progress=False)
    client = TestClient(create_app(MapData(tmp_path)), base_url="http://127.0.0.1")
    response = client.get("/api/status")
    assert response.status_code == 503
    assert response.json()["error"] == "empty-map"
    assert 'data-error="empty-map"' in client.get("/").text


def test_mini_repository_map_serves(mini_map: MapData) -> None:
    client = TestClient(create_app(mini_map), base_url="http://127.0.0.1")
    assert client.get("/api/status").json()["name"] == "mini"
    assert [r["id"] for r in client.get("/api/roles").json()] == ["compiler"]
    assert client.get("/roles/compiler").status_code == 200
    assert client.get("/map").status_code == 200


def test_impact_page_offers_the_interfaces_and_explains_each_item(
    client: TestClient, repo_map: MapData
) -> None:
    blank = client.get("/impact").text
    offered = re.findall(r'<option value="(interface:[^"]+)">', blank)
    assert offered == sorted(n for n, _ in repo_map.nodes(kinds={"interface"}))
    page = client.get("/impact", params={"target": "interface:umd_kmd.free"}).text
    layers = re.findall(r'<h2 class="layer-group" data-layer="(\w+)">', page)
    assert layers == ["umd", "kmd"]
    assert page.count('<ol class="hops">') == len(re.findall(r'<li data-node="', page))
