"""The whole product on the embedded defaults: what `make demo` runs.

Each step is a real command of the two console scripts, run on this repository: ingest the
map, the consistency summary, a question answered with citations, the impact of changing a
UMD↔KMD interface with its explanation paths, the runtime engineer's role view, a CNN through
the five layers against onnxruntime, and the web UI started, asked once over HTTP and
stopped. A step that fails stops the demo with its exit status.

``--quick`` (used by the demo's test) ingests without embeddings and runs the model fewer
times; ``--root`` points every map command at another checkout of this repository.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
QUESTION = "what changes to add a quantize op"
INTERFACE = "interface:umd_kmd.free"  # UMD ↔ KMD: the release rule of device memory


def steps(root: Path, quick: bool) -> list[tuple[str, list[str]]]:
    here = ["--root", str(root)]
    return [
        ("Ingest the map of this repository (graph and vector index)",
         ["stackmap", "ingest", str(root), "--no-progress", *(["--no-embed"] if quick else [])]),
        ("Consistency: the map against the code",
         ["stackmap", "check", str(root)]),
        ("Ask the map, answered with citations",
         ["stackmap", "ask", QUESTION, *here]),
        ("Impact of changing a UMD-KMD interface, each item with its explanation path",
         ["stackmap", "impact", INTERFACE, *here]),
        ("The runtime engineer's role view",
         ["stackmap", "role", "runtime", *here]),
        ("The reference stack: its layers and kernel backend",
         ["refstack", "status"]),
        ("A CNN through the five layers, against onnxruntime",
         ["refstack", "bench", "model", "cnn", "--runs", "3" if quick else "10"]),
    ]  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def web_ui(root: Path) -> int:
    """Start ``stackmap serve`` on a loopback port, ask it once, stop it."""
    port = _free_port()
    argv = [str(BIN / "stackmap"), "serve", "--root", str(root), "--port", str(port)]
    print(f"$ stackmap serve --port {port}   (in the background)", flush=True)
    server = subprocess.Popen(argv)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if server.poll() is not None:
                print("the web UI exited before answering", file=sys.stderr)
                return server.returncode or 1
            try:
                query = "/api/ask?q=" + QUESTION.replace(" ", "+")
                with urllib.request.urlopen(url + query, timeout=30) as response:
                    answer = json.load(response)
                break
            except OSError:
                if time.monotonic() > deadline:
                    print("the web UI did not answer within 120 s", file=sys.stderr)
                    return 1
                time.sleep(0.3)
        print(f"GET {url}{query}\n  intent {answer['intent']}, "
              f"{len(answer['citations'])} citations, {answer['latency_ms']} ms")  # fmt: skip
        print(
            "\nStart the web UI yourself with `stackmap serve` and open http://127.0.0.1:8750/ :"
            "\nAsk, Map, Check, Impact and the role views (/roles/compiler, /roles/runtime,"
            "\n/roles/driver); the JSON API is described at /docs. `stackmap serve --help` for"
            "\nbinding elsewhere (a bearer token is then required)."
        )
        return 0
    finally:
        server.terminate()
        server.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository to map")
    parser.add_argument("--quick", action="store_true", help="no embeddings, fewer model runs")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    for title, command in steps(root, args.quick):
        print(f"\n== {title}\n$ {' '.join(command)}", flush=True)
        code = subprocess.call([str(BIN / command[0]), *command[1:]], cwd=root)
        if code != 0:
            print(f"demo step failed with exit status {code}: {' '.join(command)}", file=sys.stderr)
            return code
    print("\n== The web UI", flush=True)
    return web_ui(root)


if __name__ == "__main__":
    sys.exit(main())
