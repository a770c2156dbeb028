"""One table (stack.kmd.kernels.op_table) generates KernelId, the UMD's OpKind, the C header's
REFSTACK_KERNEL_* and the proto's OpType; the committed files are exactly what it generates."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.op_table import ROWS
from stack.umd import OpKind

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gen_op_codes.py"


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gen_op_codes", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_files_are_what_the_table_generates() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_the_enums_are_the_table() -> None:
    assert [(k.value, k.name) for k in KernelId] == [(r.value, r.kernel) for r in ROWS]
    assert [(o.value, o.name) for o in OpKind] == [(r.value, r.op) for r in ROWS]
    values = [r.value for r in ROWS]
    assert values == sorted(set(values))  # appended only, never reused


def test_a_renamed_row_makes_the_check_fail() -> None:
    gen = _generator()
    renamed = tuple(r._replace(op="RENAMED") if r.value == 7 else r for r in gen.ROWS)
    gen.ROWS = renamed
    assert "stack/umd/ops.py" in gen.stale() and "contracts/umd.proto" in gen.stale()
    assert "stack/kmd/kernels/ids.py" not in gen.stale()
