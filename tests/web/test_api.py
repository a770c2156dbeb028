"""The JSON API over this repository's map: every endpoint, bad ids, oversized input."""

from __future__ import annotations

from collections import Counter

from fastapi.testclient import TestClient

from web.app import create_app
from web.data import MapData


def test_status_counts_are_the_maps(client: TestClient, repo_map: MapData) -> None:
    body = client.get("/api/status").json()
    kinds = Counter(n.kind.value for n in repo_map.map().nodes())
    assert body["nodes"] == dict(kinds)
    assert sum(body["edges"].values()) == sum(1 for _ in repo_map.map().edges())
    assert body["name"] == "refstack"


def test_ask_walks_the_quantize_scenario_with_citations(
    client: TestClient, repo_map: MapData
) -> None:
    response = client.get("/api/ask", params={"q": "what changes to add a quantize op"})
    assert response.status_code == 200
    body = response.json()
    assert body["intent"] == "new_op"
    assert body["mode"] == "default"
    _, scenario = repo_map.node_record("scenario:new-op-quantize")
    page = "knowledge_base/scenarios/new-op-quantize.md"
    steps = sorted(scenario["steps"], key=lambda s: s["order"])
    assert [(c["kind"], c["path"], c["line"]) for c in body["citations"]] == [
        ("doc", page, 1),
        *(("scenario", page, s["line"]) for s in steps),
    ]
    assert [c["n"] for c in body["citations"]] == list(range(1, len(steps) + 2))
    for citation in body["citations"]:
        hits = [ln["n"] for ln in citation["excerpt"]["lines"] if ln["hit"]]
        assert hits == [citation["line"]]
    for step in steps:
        assert step["target"] in body["answer"]


def test_ask_for_a_role_says_so(client: TestClient) -> None:
    body = client.get("/api/ask", params={"q": "who frees device memory", "role": "driver"}).json()
    assert body["role"] == "driver"
    assert body["citations"]


def test_ask_rejects_empty_and_oversized_questions(client: TestClient) -> None:
    empty = client.get("/api/ask", params={"q": "   "})
    assert empty.status_code == 400
    assert empty.json()["error"] == "bad-request"
    missing = client.get("/api/ask")
    assert missing.status_code == 400
    assert "q" in missing.json()["message"]
    huge = client.get("/api/ask", params={"q": "quantize " * 100})
    assert huge.status_code == 400
    assert "500" in huge.json()["message"]


def test_ask_with_an_unknown_role_names_the_known_ones(client: TestClient) -> None:
    response = client.get("/api/ask", params={"q": "fences", "role": "manager"})
    assert response.status_code == 404
    assert response.json()["known"] == ["compiler", "runtime", "driver"]


def test_node_detail_of_an_interface(client: TestClient, repo_map: MapData) -> None:
    body = client.get("/api/nodes/interface:umd_kmd.free").json()
    assert body["kind"] == "interface"
    assert body["contract"]["upper"] == "umd" and body["contract"]["lower"] == "kmd"
    assert body["contract"]["sync"] == "sync"
    assert body["excerpt"]["path"] == "contracts/umd_kmd.yaml"
    incoming = repo_map.neighbours("interface:umd_kmd.free")["in"]
    assert body["counts"]["in"] == len(incoming)
    assert {(e["kind"], e["source"]) for e in body["in"]} == {
        (e["kind"], e["source"]) for e in incoming
    }
    assert all(e["evidence"] and e["evidence"][0]["kind"] for e in body["in"])
    docs = [d["id"] for d in body["docs"]]
    assert "doc:knowledge_base/kmd/memory.md#device-memory" in docs


def test_node_id_without_its_kind_prefix_resolves(client: TestClient) -> None:
    assert client.get("/api/nodes/umd_kmd.free").json()["id"] == "interface:umd_kmd.free"


def test_node_ids_with_slashes_and_hashes(client: TestClient) -> None:
    node = "doc:knowledge_base/kmd/memory.md#device-memory"
    response = client.get("/api/nodes/doc:knowledge_base/kmd/memory.md%23device-memory")
    assert response.status_code == 200
    assert response.json()["id"] == node


def test_unknown_node_is_404_with_suggestions(client: TestClient) -> None:
    response = client.get("/api/nodes/interface:umd_kmd.frees")
    assert response.status_code == 404
    body = response.json()
    assert body["error"] == "unknown-node"
    assert body["node"] == "interface:umd_kmd.frees"


def test_path_traversal_never_reads_a_file(client: TestClient) -> None:
    for raw in (
        "/api/nodes/../../../../etc/passwd",
        "/api/nodes/%2e%2e/%2e%2e/etc/passwd",
        "/api/nodes/file:../../etc/passwd",
        "/api/nodes/file:/etc/passwd",
        "/static/../../pyproject.toml",
        "/static/%2e%2e/%2e%2e/pyproject.toml",
        "/nodes/file:..%2f..%2fetc%2fpasswd",
    ):
        response = client.get(raw)
        assert response.status_code == 404, raw
        assert "root:" not in response.text and "[project]" not in response.text, raw


def test_oversized_node_id_is_rejected(client: TestClient) -> None:
    response = client.get("/api/nodes/" + "x" * 5000)
    assert response.status_code == 400
    assert response.json()["error"] == "bad-request"


def test_graph_default_kinds_and_layers(client: TestClient, repo_map: MapData) -> None:
    body = client.get("/api/graph").json()
    kinds = ("component", "interface", "scenario")
    # one compound per layer, and the "(no layer)" band that holds the scenarios
    expected = len(repo_map.nodes(kinds=set(kinds))) + len(repo_map.layers()) + 1
    assert body["nodes"] == expected
    assert body["truncated"] is False
    nodes = [e for e in body["elements"] if "source" not in e["data"]]
    parents = {e["data"].get("parent") for e in nodes if e["data"]["kind"] != "layer"}
    assert parents == {
        "layer:adapter",
        "layer:compiler",
        "layer:runtime",
        "layer:umd",
        "layer:kmd",
        "band:unplaced",
    }
    assert all("position" in e for e in nodes if e["data"]["kind"] != "layer")


def test_graph_filters_by_layer_kind_and_evidence(client: TestClient, repo_map: MapData) -> None:
    body = client.get(
        "/api/graph", params=[("layer", "kmd"), ("kind", "component"), ("evidence", "contract")]
    ).json()
    components = {n for n, _ in repo_map.nodes(kinds={"component"}, layers={"kmd"})}
    nodes = {e["data"]["id"] for e in body["elements"] if "source" not in e["data"]}
    assert nodes == components | {"layer:kmd"}
    assert {e["data"]["evidence"] for e in body["elements"] if "source" in e["data"]} <= {
        "contract"
    }


def test_graph_limit_truncates(client: TestClient) -> None:
    body = client.get("/api/graph", params=[("kind", "symbol"), ("limit", "100")]).json()
    assert body["nodes"] == 100
    assert body["truncated"] is True


def test_graph_rejects_unknown_names_listing_known_ones(client: TestClient) -> None:
    response = client.get("/api/graph", params={"kind": "planet"})
    assert response.status_code == 400
    assert response.json()["known"][:3] == ["layer", "component", "interface"]
    assert client.get("/api/graph", params={"layer": "gpu"}).json()["known"] == [
        "adapter",
        "compiler",
        "runtime",
        "umd",
        "kmd",
    ]
    assert client.get("/api/graph", params={"limit": "100000"}).status_code == 400


def test_impact_mirrors_mapper_impact_per_layer(client: TestClient, repo_map: MapData) -> None:
    from mapper.impact import impact_of, open_view

    body = client.get("/api/impact", params={"target": "interface:umd_kmd.free"}).json()
    report = impact_of(
        open_view(repo_map.root, repo_map.config), repo_map.root, "interface:umd_kmd.free"
    )
    assert body["target"] == "interface:umd_kmd.free"
    assert body["count"] == len(report.affected)
    expected = {k: [a.node for a in v] for k, v in report.by_layer().items()}
    assert {g["layer"]: [i["node"] for i in g["items"]] for g in body["layers"]} == expected
    assert [g["layer"] for g in body["layers"]] == ["umd", "kmd"]
    for group in body["layers"]:
        for item in group["items"]:
            first = item["why"][0]
            assert "interface:umd_kmd.free" in (first["from"], first["to"])
            assert all(hop["evidence"] and hop["at"] for hop in item["why"])


def test_impact_of_a_revision_range(client: TestClient) -> None:
    body = client.get("/api/impact", params={"diff": "HEAD..HEAD"})
    assert body.status_code == 400  # an empty range touches nothing: say so
    assert body.json()["error"] == "bad-request"


def test_impact_bad_targets(client: TestClient) -> None:
    missing = client.get("/api/impact", params={"target": "nope.nothing"})
    assert missing.status_code == 404
    assert missing.json()["error"] == "unknown-node"
    assert client.get("/api/impact", params={"target": "y" * 301}).status_code == 400
    assert client.get("/api/impact").status_code == 400
    both = client.get("/api/impact", params={"target": "umd_kmd.free", "diff": "HEAD"})
    assert both.status_code == 400
    assert client.get("/api/impact", params={"diff": "no-such-rev..HEAD"}).status_code == 400


def test_check_groups_match_the_report(client: TestClient, repo_map: MapData) -> None:
    body = client.get("/api/check").json()
    report = repo_map.check()
    assert body["total"] == len(report.findings)
    assert sum(g["count"] for g in body["by_layer"]) == body["total"]
    assert sum(g["count"] for g in body["by_rule"]) == body["total"]
    assert [r["id"] for r in body["rules"]] == [r.id for r in report.rules]


def test_roles_list_and_view(client: TestClient) -> None:
    assert [r["id"] for r in client.get("/api/roles").json()] == ["compiler", "runtime", "driver"]
    view = client.get("/api/roles/driver").json()
    assert view["role"]["layers"] == ["umd", "kmd"]
    assert [x["id"] for x in view["layers"]] == ["umd", "kmd"]
    assert view["interfaces"]
    assert all(
        "umd" in (i["upper"], i["lower"]) or "kmd" in (i["upper"], i["lower"])
        for i in view["interfaces"]
    )


def test_unknown_role_is_404(client: TestClient) -> None:
    response = client.get("/api/roles/manager")
    assert response.status_code == 404
    assert response.json() == {
        "error": "unknown-role",
        "message": "no role 'manager' in stackmap.toml",
        "known": ["compiler", "runtime", "driver"],
    }


def test_openapi_describes_every_endpoint(client: TestClient) -> None:
    paths = set(client.get("/openapi.json").json()["paths"])
    assert paths == {
        "/api/status",
        "/api/ask",
        "/api/nodes/{node_id}",
        "/api/graph",
        "/api/impact",
        "/api/check",
        "/api/roles",
        "/api/roles/{role}",
    }


def test_unknown_api_path_is_json_404(client: TestClient) -> None:
    response = client.get("/api/nothing")
    assert response.status_code == 404
    assert response.json()["error"] == "http-404"


def test_an_excerpt_shows_the_file_as_the_map_holds_it(mini_map: MapData) -> None:
    """The lines around a node agree with the map's line numbers after the file changes."""
    client = TestClient(create_app(mini_map), base_url="http://127.0.0.1")
    ir = mini_map.root / "compiler" / "ir.py"
    ingested = ir.read_text(encoding="utf-8").splitlines()
    ir.write_text("# two lines written\n# above everything\n" + "\n".join(ingested), "utf-8")
    body = client.get("/api/nodes/symbol:compiler.ir.make_node").json()
    hit = next(ln for ln in body["excerpt"]["lines"] if ln["hit"])
    assert (hit["n"], hit["text"]) == (18, ingested[17])
    assert hit["text"].startswith("def make_node(")
