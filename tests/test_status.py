"""The status commands: ``refstack status``, ``refstack kmd status`` and ``stackmap status``
report what they claim about this checkout and this machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from stack.kmd.kernels.ids import KernelId

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[1]


def _json(*argv: str) -> dict:
    result = subprocess.run(
        [str(BIN / argv[0]), *argv[1:], "--json"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_refstack_status_names_the_layers_and_the_backend() -> None:
    record = _json("refstack", "status")
    assert record["layers"] == ["adapter", "compiler", "runtime", "umd", "kmd"]
    assert record["backend"] in record["backends_available"]
    assert "numpy" in record["backends_available"]


def test_refstack_kmd_status_lists_every_kernel_of_the_backend() -> None:
    record = _json("refstack", "kmd", "status")
    assert record["backend"] in record["backends_available"]
    assert record["kernels"] == [k.name for k in KernelId]  # every id has a kernel
    assert record["memory_limit_bytes"] > 0


def test_stackmap_status_counts_this_repository() -> None:
    record = _json("stackmap", "status", str(ROOT))
    assert record["config"] is True
    contracts = sorted(p.name for p in (ROOT / "contracts").iterdir() if p.is_file())
    assert record["contracts"] == contracts
    assert record["knowledge_base_pages"] == len(list((ROOT / "knowledge_base").rglob("*.md")))
