"""The main job on the embedded defaults: what `make demo` runs.

Each step is a real command of the two console scripts; a step that fails stops the demo with
its exit status.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

STEPS: list[list[str]] = [
    # The reference stack: a ResNet-style CNN through all five layers, against onnxruntime.
    ["refstack", "status"],
    ["refstack", "bench", "model", "cnn", "--runs", "10"],
    # The map of that stack: ingest, ask, list, and check the map against the code.
    ["stackmap", "ingest", "."],
    ["stackmap", "search", "who frees device memory", "--limit", "5"],
    ["stackmap", "ask", "what changes to add a quantize op", "--role", "compiler"],
    ["stackmap", "ls", "--kind", "layer"],
    ["stackmap", "check", "."],
]


def main() -> int:
    for argv in STEPS:
        print(f"\n$ {' '.join(argv)}", flush=True)
        code = subprocess.call([str(BIN / argv[0]), *argv[1:]], cwd=ROOT)
        if code != 0:
            print(f"demo step failed with exit status {code}: {' '.join(argv)}", file=sys.stderr)
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
