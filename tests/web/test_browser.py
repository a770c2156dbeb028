"""End to end in real headless Chromium (Debian's ``chromium``, driven by Playwright through
``executable_path``; ``make test`` installs it). Each test saves a screenshot under
``out/screenshots/`` and checks that no request left the server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.provisioning import provisioned_tool
from web.data import MapData

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "out" / "screenshots"
CHROMIUM, pytestmark = provisioned_tool(
    "chromium", "chromium-browser", installs="apt-get install chromium"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, live_url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900}, base_url=live_url)
    page = context.new_page()
    page.set_default_timeout(120_000)  # a loaded CI machine can take a minute to draw a map
    outside: list[str] = []
    errors: list[str] = []
    page.on(
        "request",
        lambda r: None if r.url.startswith((live_url, "data:")) else outside.append(r.url),
    )
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page
    context.close()
    assert outside == [], f"requests left the server: {outside}"
    assert errors == [], f"script errors: {errors}"


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)


def test_ask_the_quantize_question(page: Any, repo_map: MapData) -> None:
    page.goto("/ask")
    page.fill("input[name=q]", "what changes to add a quantize op")
    page.click("form.ask button")
    page.wait_for_selector("#answer")
    _, scenario = repo_map.node_record("scenario:new-op-quantize")
    assert page.locator("#answer").get_attribute("data-intent") == "new_op"
    text = page.locator("pre.answer-text").inner_text()
    assert "Scenario new-op-quantize" in text
    citations = page.locator("li.citation")
    assert citations.count() == len(scenario["steps"]) + 1
    first = citations.first
    assert first.get_attribute("data-path") == "knowledge_base/scenarios/new-op-quantize.md"
    assert first.locator(".ln.hit").count() == 1
    shot(page, "ask-quantize")
    first.locator("a").first.click()
    page.wait_for_url("**/nodes/scenario:new-op-quantize")


def test_map_click_into_a_component(page: Any) -> None:
    page.goto("/map")
    page.wait_for_function("document.body.dataset.mapReady === '1'")
    shot(page, "map")
    box = page.locator("#cy").bounding_box()
    point = page.evaluate(
        "() => { const n = cy.getElementById('component:kmd.memory');"
        " cy.zoom(1.5); cy.center(n); const p = n.renderedPosition();"
        " return {x: p.x, y: p.y}; }"
    )
    page.mouse.click(box["x"] + point["x"], box["y"] + point["y"])
    page.wait_for_url("**/nodes/component:kmd.memory")
    assert page.locator("h1").inner_text() == "component kmd.memory"
    shot(page, "component-kmd-memory")


def test_map_filters_by_layer(page: Any) -> None:
    page.goto("/map")
    page.wait_for_function("document.body.dataset.mapReady === '1'")
    for layer in ("adapter", "compiler", "runtime", "umd"):
        page.uncheck(f"input[name=layer][value={layer}]")
    with page.expect_navigation(url="**/map?*layer=kmd*", wait_until="load"):
        page.click("form.filters button")  # the wait is armed before the click can navigate
    assert "layer=kmd" in page.url
    page.wait_for_function("document.body.dataset.mapReady === '1'")  # the new page's map
    layers = page.evaluate("() => cy.nodes().map(n => n.data('layer'))")
    assert set(layers) == {"kmd"}


def test_a_2000_node_map_draws_every_node_then_every_edge(page: Any, client: Any) -> None:
    query = "kind=component&kind=interface&kind=scenario&kind=symbol&kind=file&limit=2000"
    expected = client.get(f"/api/graph?{query}").json()
    page.goto(f"/map?{query}")
    page.wait_for_function("document.body.dataset.mapReady === '1'")
    assert page.evaluate("cy.nodes().length") == expected["nodes"] == 2000
    page.wait_for_function("document.body.dataset.edgesReady === '1'")
    assert page.evaluate("cy.edges().length") == expected["edges"]
    assert page.evaluate("cy.nodes('.band').length") == 6  # five layers and "(no layer)"
    shot(page, "map-2000-nodes")


@pytest.mark.parametrize("role", ["compiler", "runtime", "driver"])
def test_role_views(page: Any, repo_map: MapData, role: str) -> None:
    page.goto("/")
    page.click(f"a[data-role={role}]")
    page.wait_for_url(f"**/roles/{role}")
    view = repo_map.role(role)
    assert page.locator("h1").inner_text() == view["role"]["name"]
    assert page.locator("table.ifaces tbody tr").count() == len(view["interfaces"])
    assert page.locator("form.ask button").inner_text() == f"Ask as {role}"
    shot(page, f"role-{role}")


def test_api_docs_render_offline(page: Any) -> None:
    page.goto("/docs")
    page.wait_for_selector(".opblock-summary-path")
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert "/api/ask" in [p.strip() for p in paths]
    shot(page, "api-docs")


def test_impact_of_a_umd_kmd_interface(page: Any) -> None:
    page.goto("/impact")
    page.fill("input[name=target]", "interface:umd_kmd.free")
    page.click("form.ask button")
    page.wait_for_selector("h2.layer-group")
    layers = page.locator("h2.layer-group").evaluate_all("hs => hs.map(h => h.dataset.layer)")
    assert layers == ["umd", "kmd"]
    page.locator("ul.affected details summary").first.click()
    assert page.locator("ol.hops li").first.is_visible()
    shot(page, "impact-umd-kmd-free")


def test_impact_of_a_pasted_patch(page: Any, free_patch: str) -> None:
    page.goto("/impact")
    page.fill("form.patch textarea", free_patch)
    page.click("form.patch button")
    page.wait_for_selector("#impact-count")
    summary = page.locator("#impact-count").inner_text()
    assert " items affected by patch (precise) · effort: " in summary
    changed = page.locator("h2:text('Changed') + ul li").all_inner_texts()
    assert [c.split()[:2] for c in changed] == [
        ["compatible", "symbol:stack.kmd.device.KmdDevice.free"]
    ]
    assert "new optional parameter 'sync'" in changed[0]
    assert "umd" in page.locator("h2.layer-group").evaluate_all(
        "hs => hs.map(h => h.dataset.layer)"
    )
    page.locator("ul.affected details summary").first.click()
    first_hop = page.locator("ol.hops li").first
    assert first_hop.is_visible()
    assert first_hop.locator("code.loc").inner_text()  # each hop cites where it was seen
    assert page.locator("form.patch textarea").input_value() == free_patch  # kept for editing
    shot(page, "impact-pasted-patch")
