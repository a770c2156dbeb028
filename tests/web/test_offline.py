"""Nothing is loaded from outside the server: every page's links and assets are local, our
own assets name no outside URL, and the vendored files are the recorded npm releases."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

STATIC = Path(__file__).resolve().parents[2] / "web" / "static"
PAGES = [
    "/",
    "/ask?q=what+changes+to+add+a+quantize+op",
    "/map",
    "/map?kind=symbol",
    "/nodes/interface:umd_kmd.free",
    "/check",
    "/impact?target=umd_kmd.free",
    "/roles/compiler",
    "/roles/runtime",
    "/roles/driver",
    "/docs",
    "/nodes/nope",
]
ATTR = re.compile(r'\b(?:src|href|action)\s*=\s*"([^"]*)"')
EXTERNAL = re.compile(r"(?:https?:)?//[\w.-]+", re.IGNORECASE)


@pytest.mark.parametrize("path", PAGES)
def test_pages_link_only_to_this_server(client: TestClient, path: str) -> None:
    page = client.get(path).text
    targets = ATTR.findall(page)
    assert targets, path
    outside = [
        t for t in targets if not (t.startswith(("/", "#", "data:")) and not t.startswith("//"))
    ]
    assert outside == [], path


def test_pages_load_every_asset_they_name(client: TestClient) -> None:
    assets = set()
    for path in PAGES:
        assets.update(re.findall(r'(?:src|href)="(/static/[^"]+)"', client.get(path).text))
    assert assets == {
        "/static/app.css",
        "/static/map.js",
        "/static/docs.js",
        "/static/vendor/cytoscape/cytoscape.min.js",
        "/static/vendor/swagger-ui/swagger-ui-bundle.js",
        "/static/vendor/swagger-ui/swagger-ui.css",
    }
    for asset in sorted(assets):
        assert client.get(asset).status_code == 200, asset


@pytest.mark.parametrize("name", ["app.css", "map.js", "docs.js"])
def test_own_assets_name_no_outside_url(name: str) -> None:
    assert EXTERNAL.findall((STATIC / name).read_text(encoding="utf-8")) == []


def test_vendored_css_imports_nothing_from_outside() -> None:
    for css in STATIC.glob("vendor/**/*.css"):
        text = css.read_text(encoding="utf-8")
        assert re.findall(r"url\(\s*['\"]?(?:https?:)?//", text) == [], css
        assert "@import" not in text, css


def test_vendored_files_match_their_record() -> None:
    record = json.loads((STATIC / "vendor" / "VENDOR.json").read_text(encoding="utf-8"))
    listed = {}
    for package in record["packages"]:
        assert package["version"] and package["license"]
        assert (STATIC / "vendor" / package["licence_file"]).is_file()
        listed.update(package["files"])
    shipped = {
        str(p.relative_to(STATIC / "vendor"))
        for p in (STATIC / "vendor").rglob("*")
        if p.suffix in (".js", ".css")
    }
    assert set(listed) == shipped
    for name, meta in listed.items():
        digest = hashlib.sha256((STATIC / "vendor" / name).read_bytes()).hexdigest()
        assert digest == meta["sha256"], name


def test_api_docs_are_self_hosted(client: TestClient) -> None:
    page = client.get("/docs").text
    assert '<script src="/static/vendor/swagger-ui/swagger-ui-bundle.js" defer></script>' in page
    assert "validatorUrl: null" in (STATIC / "docs.js").read_text(encoding="utf-8")
    assert client.get("/redoc").status_code == 404
