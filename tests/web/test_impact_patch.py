"""``POST /api/impact`` and ``POST /impact``: the impact of a pasted patch, with malformed,
oversized, docs-only and cross-site posts refused with a message a person can act on."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from web.app import create_app
from web.data import MapData
from web.security import MAX_BODY

FREE_NODE = "symbol:stack.kmd.device.KmdDevice.free"


def test_a_patch_is_mapped_and_classified(client: TestClient, free_patch: str) -> None:
    response = client.post("/api/impact", json={"patch": free_patch})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["target"] == "patch"
    assert [(c["node"], c["impact"], c["how"]) for c in body["changed"]] == [
        (
            FREE_NODE,
            "compatible",
            [f"python {FREE_NODE.removeprefix('symbol:')}: new optional parameter 'sync'"],
        )
    ]
    assert body["diff_files"] == ["stack/kmd/device.py"]
    contract = next(a for a in body["affected"] if a["node"] == "interface:umd_kmd.free")
    assert contract["why"][0]["from"] in (FREE_NODE, "interface:umd_kmd.free")
    assert all(hop["evidence"] and hop["at"] for a in body["affected"] for hop in a["why"])
    assert body["count"] == len(body["affected"])
    assert "umd" in {g["layer"] for g in body["layers"]}  # the callers of free


def test_the_same_patch_as_a_form_gives_the_page(client: TestClient, free_patch: str) -> None:
    response = client.post(
        "/impact",
        data={"patch": free_patch.replace("\n", "\r\n"), "conservative": "true"},
        headers={"origin": "http://127.0.0.1", "sec-fetch-site": "same-origin"},
    )
    assert response.status_code == 200, response.text
    assert "items affected by <b>patch</b> (conservative)" in response.text
    assert f'<a href="/nodes/{FREE_NODE}">{FREE_NODE}</a>' in response.text
    changed = response.text.partition("<h2>Changed</h2>")[2].partition("</ul>")[0]
    assert "new optional parameter &#39;sync&#39;" in changed, changed


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ("not a diff\n", "no file header found"),
        (
            "--- a/stack/kmd/device.py\n+++ b/stack/kmd/device.py\n@@ -1,3 +1 @@\n-x\n+y\n",
            "patch line 3: hunk ends early: 2 old and 0 new lines missing",
        ),
        (
            "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n",
            "patch line 1: path '../../etc/passwd' leaves the repository",
        ),
        ("", "give one of a target"),
    ],
)
def test_malformed_patches_are_400_with_the_reason(
    client: TestClient, patch: str, message: str
) -> None:
    response = client.post("/api/impact", json={"patch": patch})
    assert response.status_code == 400
    assert response.json()["error"] == "bad-request"
    assert response.json()["message"].startswith(message)


def test_a_docs_only_patch_says_there_is_nothing_to_analyse(client: TestClient) -> None:
    patch = "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# StackMap\n+# StackMap!\n"
    response = client.post("/api/impact", json={"patch": patch})
    assert response.status_code == 400
    assert response.json() == {
        "error": "bad-request",
        "message": "the patch touches no code, proto or contract file (README.md)",
    }


def test_oversized_patches_are_413(client: TestClient) -> None:
    big = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+" + "b" * 1_000_000 + "\n"
    over_cap = client.post("/api/impact", json={"patch": big})
    assert over_cap.status_code == 413
    assert len(big) == 1_000_039
    assert over_cap.json() == {
        "error": "too-large",
        "message": "the patch is 1000039 bytes; at most 1000000 are read",
        "limit": "max_bytes",
        "size": 1_000_039,
    }
    body = b'{"patch": "' + b"x" * MAX_BODY + b'"}'
    over_body = client.post(
        "/api/impact", content=body, headers={"content-type": "application/json"}
    )
    assert over_body.status_code == 413
    assert over_body.json()["message"] == (
        f"the request body is over {MAX_BODY} bytes; paste a smaller patch"
    )


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://evil.example"},
        {"origin": "null"},
        {"origin": "http://127.0.0.1", "sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
    ],
)
def test_cross_site_posts_are_refused(
    client: TestClient, free_patch: str, headers: dict[str, str]
) -> None:
    response = client.post("/impact", data={"patch": free_patch}, headers=headers)
    assert response.status_code == 403
    assert response.json()["error"] == "cross-site"


def test_a_browser_form_with_origin_null_but_same_origin_fetch_is_served(
    client: TestClient, free_patch: str
) -> None:
    response = client.post(
        "/impact",
        data={"patch": free_patch},
        headers={"origin": "null", "sec-fetch-site": "same-origin"},
    )
    assert response.status_code == 200


def test_posts_elsewhere_stay_405(client: TestClient) -> None:
    response = client.post("/api/ask", json={"q": "x"})
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"
    put = client.put("/api/impact", json={"patch": "x"})
    assert (put.status_code, put.headers["allow"]) == (405, "GET, HEAD, POST")


def test_the_token_is_required_before_the_body_is_read(repo_map: MapData, free_patch: str) -> None:
    guarded = TestClient(create_app(repo_map, token="t0k"), base_url="http://127.0.0.1")
    assert guarded.post("/api/impact", json={"patch": free_patch}).status_code == 401
    allowed = guarded.post(
        "/api/impact", json={"patch": free_patch}, headers={"authorization": "Bearer t0k"}
    )
    assert allowed.status_code == 200
    untrusted = TestClient(create_app(repo_map), base_url="http://evil.example")
    assert untrusted.post("/api/impact", json={"patch": free_patch}).status_code == 400


def test_a_form_post_needs_the_form_encoding(client: TestClient, free_patch: str) -> None:
    response = client.post("/impact", content=free_patch, headers={"content-type": "text/plain"})
    assert response.status_code == 400
    assert "application/x-www-form-urlencoded" in response.text
