"""``scripts/demo.py`` (what ``make demo`` runs) on a copy of this repository, quick mode:
every step runs and exits 0, and each shows what it is there to show."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _copy_of_repository(dest: Path) -> Path:
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-co", "--exclude-standard", "-z"],
        capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


@pytest.mark.slow
def test_demo_shows_the_whole_product(tmp_path: Path) -> None:
    root = _copy_of_repository(tmp_path / "repo")
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "demo.py"), "--quick", "--root", str(root)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    headers = [line for line in out.splitlines() if line.startswith("== ")]
    assert headers == [
        "== Ingest the map of this repository (graph and vector index)",
        "== Consistency: the map against the code",
        "== Ask the map, answered with citations",
        "== Impact of changing a UMD-KMD interface, each item with its explanation path",
        "== The runtime engineer's role view",
        "== The reference stack: its layers and kernel backend",
        "== A CNN through the five layers, against onnxruntime",
        "== The web UI",
    ]
    assert "stackmap check: 0 findings" in out + proc.stderr
    assert "Scenario new-op-quantize" in out
    assert "knowledge_base/scenarios/new-op-quantize.md:5" in out
    assert "impact of interface:umd_kmd.free" in out
    assert "<-implements- symbol:" in out  # an explanation path, hop by hop
    assert "Runtime engineer (runtime): layers compiler, runtime, umd" in out
    assert "max_abs_err" in out
    assert "intent new_op, 11 citations" in out
