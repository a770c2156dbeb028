"""Write KernelId, OpKind, REFSTACK_KERNEL_* and the proto's OpType from the one table.

Usage: ``python scripts/gen_op_codes.py`` (rewrites the generated blocks, then regenerates the
gRPC code when the proto changed) or ``--check`` (exit 1 naming the stale files). The table is
``stack.kmd.kernels.op_table.ROWS``; each target holds its block between ``BEGIN GENERATED``
and ``END GENERATED`` marker lines, which this script leaves in place.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _load_table() -> ModuleType:
    """The table module, loaded from its file alone: importing ``stack.kmd`` would import the
    very enums this script writes (a new row would fail before it is generated)."""
    path = ROOT / "stack" / "kmd" / "kernels" / "op_table.py"
    spec = importlib.util.spec_from_file_location("op_table", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["op_table"] = module  # NamedTuple resolves its module by name
    spec.loader.exec_module(module)
    return module


_TABLE = _load_table()
ROWS = _TABLE.ROWS
KernelRow = _TABLE.KernelRow

Render = Callable[[tuple[Any, ...]], str]


def _python(attr: str) -> Render:
    return lambda rows: "".join(f"    {getattr(r, attr)} = {r.value}\n" for r in rows)


def _header(rows: tuple[Any, ...]) -> str:
    return "".join(f"#define REFSTACK_KERNEL_{r.kernel:<14} {r.value}\n" for r in rows)


def _proto(rows: tuple[Any, ...]) -> str:
    return "  OP_UNSPECIFIED = 0;\n" + "".join(f"  OP_{r.op} = {r.value};\n" for r in rows)


#: (file, comment leader, renderer)
TARGETS: tuple[tuple[str, str, Render], ...] = (
    ("stack/kmd/kernels/ids.py", "#", _python("kernel")),
    ("stack/umd/ops.py", "#", _python("op")),
    ("stack/kmd/include/refstack_kmd.h", "/*", _header),
    ("contracts/umd.proto", "//", _proto),
)


def generated(path: str, leader: str, render: Render) -> str:
    """The file's text with its generated block rendered from the table."""
    text = (ROOT / path).read_text()
    lead = re.escape(leader)
    pattern = re.compile(
        rf"(^[ \t]*{lead} BEGIN GENERATED[^\n]*\n)(.*?)(^[ \t]*{lead} END GENERATED)", re.S | re.M
    )
    if not pattern.search(text):
        raise SystemExit(f"{path}: no BEGIN/END GENERATED block")
    return pattern.sub(lambda m: m.group(1) + render(ROWS) + m.group(3), text, count=1)


def stale() -> list[str]:
    """Targets whose committed text differs from what the table generates."""
    return [p for p, lead, r in TARGETS if (ROOT / p).read_text() != generated(p, lead, r)]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        out = stale()
        for path in out:
            print(f"{path} is stale: run python scripts/gen_op_codes.py", file=sys.stderr)
        return 1 if out else 0
    changed = stale()
    for path, leader, render in TARGETS:
        (ROOT / path).write_text(generated(path, leader, render))
    if "contracts/umd.proto" in changed:
        subprocess.run([sys.executable, "-m", "stack.umd.service.codegen"], check=True, cwd=ROOT)
    for path in changed:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
