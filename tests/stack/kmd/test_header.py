"""The C header declares the same ABI as the Python enums (what C clients and the map see)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from stack.kmd import DType, Ioctl, KernelId
from stack.kmd import blob as B
from stack.kmd.faults import FaultKind

HEADER = Path(__file__).resolve().parents[3] / "stack/kmd/include/refstack_kmd.h"
DEFINE = re.compile(r"^#define\s+(REFSTACK_[A-Z0-9_]+)\s+(0x[0-9A-Fa-f]+|\d+)u?\b", re.M)


def _defines(prefix: str) -> dict[str, int]:
    found = DEFINE.findall(HEADER.read_text())
    return {name[len(prefix) :]: int(value, 0) for name, value in found if name.startswith(prefix)}


@pytest.mark.parametrize(
    ("prefix", "enum"),
    [
        ("REFSTACK_DTYPE_", DType),
        ("REFSTACK_KERNEL_", KernelId),
        ("REFSTACK_IOCTL_", Ioctl),
        ("REFSTACK_FAULT_", FaultKind),
    ],
)
def test_header_constants_agree_with_python(prefix: str, enum: type) -> None:
    assert _defines(prefix) == {m.name: int(m) for m in enum}  # type: ignore[attr-defined]


def test_header_blob_constants() -> None:
    defs = _defines("REFSTACK_BLOB_")
    assert defs == {"MAGIC": B.MAGIC, "VERSION": B.VERSION, "MAX_DIMS": B.MAX_DIMS}


def test_header_struct_sizes_match_the_blob_format() -> None:
    text = HEADER.read_text()
    assert "56 bytes" in text.split("struct refstack_blob_header")[1].split("};")[1]
    assert B.HEADER.size == 56 and B.PARAM.size == 84 == struct.calcsize("<QQBBH8q")


def test_ioctl_comment_matches_encoding() -> None:
    rows = re.findall(
        r"REFSTACK_IOCTL_(\w+)\s+0x[0-9A-F]+u /\* (_IOW|_IOR|_IOWR)\('R', (\d+), (\d+)\)",
        HEADER.read_text(),
    )
    assert len(rows) == len(Ioctl)
    for name, direction, nr, size in rows:
        ioctl = Ioctl[name]
        assert (ioctl.nr, ioctl.size) == (int(nr), int(size))
        assert ioctl.value >> 30 == {"_IOW": 1, "_IOR": 2, "_IOWR": 3}[direction]


STRUCT_OF = {
    "CREATE_CONTEXT": "context_args", "DESTROY_CONTEXT": "context_args",
    "RESET_CONTEXT": "context_args", "ALLOC": "alloc_args", "FREE": "free_args",
    "WRITE": "rw_args", "READ": "rw_args", "MAP": "map_args", "CREATE_QUEUE": "queue_args",
    "DESTROY_QUEUE": "queue_args", "RESET_QUEUE": "queue_args",
    "CREATE_FENCE": "create_fence_args", "DESTROY_FENCE": "fence_args",
    "SUBMIT": "submit_args", "FENCE_VALUE": "fence_value_args",
    "SIGNAL_FENCE": "fence_value_args", "WAIT_FENCE": "wait_fence_args",
    "ON_FENCE": "on_fence_args", "INJECT_FAULT": "inject_fault_args", "STATS": "stats_args",
    "CREATE_CMDBUF": "create_cmdbuf_args", "EXECUTE_CMDBUF": "execute_cmdbuf_args",
    "DESTROY_CMDBUF": "cmdbuf_args",
}  # fmt: skip


def test_c_struct_sizes_equal_the_ioctl_sizes(tmp_path: Path) -> None:
    """Compile the header and print sizeof of every struct: the ABI a C client really gets."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler here")
    assert set(STRUCT_OF) == {i.name for i in Ioctl}
    names = sorted({*STRUCT_OF.values(), "blob_header", "tensor_param"})
    prints = "\n".join(f'printf("{n} %zu\\n", sizeof(struct refstack_{n}));' for n in names)
    src = tmp_path / "sizes.c"
    src.write_text(
        f'#include <stdio.h>\n#include "{HEADER}"\nint main(void) {{\n{prints}\nreturn 0;}}\n'
    )
    exe = tmp_path / "sizes"
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    sizes = {name: int(size) for name, size in (line.split() for line in out.splitlines())}
    assert sizes["blob_header"] == B.HEADER.size and sizes["tensor_param"] == B.PARAM.size
    for ioctl in Ioctl:
        assert sizes[STRUCT_OF[ioctl.name]] == ioctl.size, ioctl.name
