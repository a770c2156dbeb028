"""Benchmarks of the web UI, printed as figures (never asserted by tests).

``python -m web.bench ask``: latency of ``GET /api/ask`` over HTTP on a repository's current
map (the default path: the store ``stackmap ingest`` wrote), against ``GET /api/status`` on the
same server in the same run as the baseline. ``python -m web.bench map``: first paint of the
Map page with N nodes in headless Chromium (the time from navigation to cytoscape's first
frame, nodes and layers drawn; and to the frame with the edges added) on a first visit and on
a returning visit (vendored scripts cached), against the default Map page in the same run.

Both serve the app with uvicorn on 127.0.0.1 in a thread, bounded in count and time.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

QUESTIONS = (
    "what changes to add a quantize op",
    "who frees device memory",
    "how does the runtime wait on a fence",
    "what happens when the device faults",
    "where are kernel templates instantiated",
    "which ioctl submits a command buffer",
    "how is the instruction blob laid out",
    "what does the UMD cache",
    "KmdDevice.free",
    "who is responsible for synchronisation before free",
    "how are streams scheduled",
    "where is constant folding",
    "umd_kmd.submit",
    "how does the compiler plan memory",
    "what is the Executable format version",
    "how do I add a translator",
)


@contextmanager
def serving(root: Path) -> Iterator[str]:
    import socket

    import uvicorn

    from web.app import create_app
    from web.data import MapData

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = uvicorn.Server(
        uvicorn.Config(create_app(MapData(root)), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise SystemExit("error: the server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(p95 * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
    }


def _timed(call: Callable[[], Any], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        out.append(time.perf_counter() - start)
    return out


def bench_ask(root: Path, rounds: int) -> dict[str, Any]:
    import httpx

    with serving(root) as url, httpx.Client(base_url=url, timeout=60) as client:
        first = client.get("/api/ask", params={"q": QUESTIONS[0]})  # loads map and model
        if first.status_code != 200:
            raise SystemExit(f"error: /api/ask answered {first.status_code}: {first.text}")
        asks: list[float] = []
        for _ in range(rounds):
            for q in QUESTIONS:
                start = time.perf_counter()
                client.get("/api/ask", params={"q": q})
                asks.append(time.perf_counter() - start)
        status = _timed(lambda: client.get("/api/status"), len(asks))
    ask, base = _percentiles(asks), _percentiles(status)
    return {
        "ask": ask,
        "baseline_status": base,
        "p95_ratio_to_baseline": round(ask["p95_ms"] / max(base["p95_ms"], 1e-3), 1),
        "goal_p95_ms": 300,
    }


# map.js sets these attributes; a selector needs no eval, which the page's CSP refuses
MAP_READY = "body[data-map-ready='1']"
EDGES_READY = "body[data-edges-ready='1']"


def bench_map(root: Path, nodes: int, runs: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("error: chromium is not installed (apt-get install chromium)")
    big = "/map?kind=component&kind=interface&kind=scenario&kind=symbol&kind=file" + (
        f"&limit={nodes}"
    )
    figures: dict[str, list[float]] = {"big": [], "default": [], "big_edges": [], "warm": []}
    shown: dict[str, int] = {}
    with serving(root) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        returning = browser.new_context(viewport={"width": 1400, "height": 900})
        for _ in range(runs + 1):  # the first round warms the server's caches, not counted
            # a returning visitor: the vendored scripts come from the browser's cache
            page = returning.new_page()
            page.goto(url + big)
            page.wait_for_selector(MAP_READY, state="attached", timeout=60_000)
            figures["warm"].append(page.evaluate("window.mapReady") / 1000)
            page.close()
            for name, path in (("default", "/map"), ("big", big)):  # first visits
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(url + path)
                page.wait_for_selector(MAP_READY, state="attached", timeout=60_000)
                figures[name].append(page.evaluate("window.mapReady") / 1000)
                page.wait_for_selector(EDGES_READY, state="attached", timeout=60_000)
                if name == "big":
                    figures["big_edges"].append(page.evaluate("window.edgesReady") / 1000)
                shown[name] = page.evaluate("cy.nodes().length")
                shown[f"{name}_edges"] = page.evaluate("cy.edges().length")
                page.close()
        browser.close()
    big_p, base_p = (_percentiles(figures[k][1:]) for k in ("big", "default"))
    return {
        "nodes": shown["big"],
        "edges": shown["big_edges"],
        "first_paint": big_p,
        "first_paint_returning_visit": _percentiles(figures["warm"][1:]),
        "edges_drawn": _percentiles(figures["big_edges"][1:]),
        "baseline_default_map": {"nodes": shown["default"], **base_p},
        "median_ratio_to_baseline": round(big_p["p50_ms"] / max(base_p["p50_ms"], 1e-3), 2),
        "goal_ms": 1000,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m web.bench", description=__doc__)
    parser.add_argument("what", choices=("ask", "map"))
    parser.add_argument("--root", type=Path, default=Path("."))
    parser.add_argument("--rounds", type=int, default=5, help="ask: rounds of 16 questions")
    parser.add_argument("--nodes", type=int, default=2000, help="map: nodes on the big page")
    parser.add_argument("--runs", type=int, default=5, help="map: page loads of each page")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.what == "ask":
        result = bench_ask(args.root, max(1, min(args.rounds, 50)))
    else:
        result = bench_map(args.root, max(1, min(args.nodes, 5000)), max(1, min(args.runs, 20)))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:28} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
