"""The stack's status commands: ``refstack status`` and ``refstack kmd status`` report what they
claim about this machine (``stackmap status`` is tested with the map's CLI)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from stack.kmd.kernels.ids import KernelId

BIN = Path(sys.executable).parent


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
