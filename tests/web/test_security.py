"""The guard: bearer token (header, cookie, one-time query), trusted hosts, read-only
methods and the security headers."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from web.app import create_app
from web.data import MapData
from web.security import COOKIE, CSP

TOKEN = "s3cret-token-for-tests"


@pytest.fixture
def guarded(repo_map: MapData) -> TestClient:
    return TestClient(
        create_app(repo_map, token=TOKEN), base_url="http://127.0.0.1", follow_redirects=False
    )


@pytest.mark.parametrize(
    "path",
    [
        "/api/status",
        "/",
        "/map",
        "/static/app.css",
        "/openapi.json",
        "/docs",
        "/api/nodes/layer:kmd",
    ],
)
def test_without_the_token_everything_is_401(guarded: TestClient, path: str) -> None:
    response = guarded.get(path)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json()["error"] == "unauthorised"


@pytest.mark.parametrize(
    "header", [f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", "Bearer ", f"Basic {TOKEN}", TOKEN]
)
def test_wrong_tokens_are_refused(guarded: TestClient, header: str) -> None:
    assert guarded.get("/api/status", headers={"Authorization": header}).status_code == 401


def test_bearer_header_is_accepted(guarded: TestClient) -> None:
    response = guarded.get("/api/status", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    assert response.json()["name"] == "refstack"


def test_query_token_sets_a_cookie_and_drops_itself_from_the_url(repo_map: MapData) -> None:
    app = create_app(repo_map, token=TOKEN)

    def fresh(cookie: str | None = None) -> TestClient:
        c = TestClient(app, base_url="http://127.0.0.1", follow_redirects=False)
        if cookie is not None:
            c.cookies.set(COOKIE, cookie)
        return c

    response = fresh().get("/map", params={"token": TOKEN, "layer": "kmd"})
    assert response.status_code == 303
    assert response.headers["location"] == "/map?layer=kmd"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}={TOKEN};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert fresh(TOKEN).get("/map?layer=kmd").status_code == 200
    assert fresh("wrong").get("/map").status_code == 401
    assert fresh().get("/map", params={"token": "wrong"}).status_code == 401


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
def test_read_only(client: TestClient, method: str) -> None:
    response = client.request(method, "/api/check")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"


def test_untrusted_host_header_is_refused(repo_map: MapData) -> None:
    foreign = TestClient(create_app(repo_map), base_url="http://evil.example")
    assert foreign.get("/api/status").status_code == 400
    rebinding = TestClient(create_app(repo_map), base_url="http://127.0.0.1.nip.io")
    assert rebinding.get("/api/status").status_code == 400


def test_allowed_hosts_can_be_extended(repo_map: MapData) -> None:
    app = create_app(repo_map, allowed_hosts=["map.internal"])
    assert TestClient(app, base_url="http://map.internal").get("/api/status").status_code == 200
    assert TestClient(app, base_url="http://127.0.0.1").get("/api/status").status_code == 400


def test_security_headers_on_pages_and_assets(client: TestClient) -> None:
    for path in ("/", "/static/app.css", "/api/status", "/nodes/nope"):
        headers = client.get(path).headers
        assert headers["content-security-policy"] == CSP, path
        assert headers["x-content-type-options"] == "nosniff", path
        assert headers["x-frame-options"] == "DENY", path


def test_vendored_assets_may_be_cached_and_pages_not(client: TestClient) -> None:
    vendored = client.get("/static/vendor/cytoscape/cytoscape.min.js")
    assert vendored.headers["cache-control"] == "public, max-age=86400"
    assert "cache-control" not in client.get("/static/map.js").headers
    assert "cache-control" not in client.get("/api/status").headers
