"""Interfaces discovered from the code (mapper.ingest.discover) and listed by ``stackmap ls``:
ioctls a Python user-space driver issues (through a ctypes mirror or ``fcntl.ioctl``) to a C
kernel driver, and contract entries matched to what the code uses."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from mapper.ingest import ingest, load_map
from tests.mapper.conftest import FIXTURES

BIN = Path(sys.executable).parent
FOREIGN = FIXTURES / "foreign"
KFD_H = "kernel/include/uapi/linux/kfd_ioctl.h"
CHARDEV = "kernel/drivers/gpu/drm/amd/amdkfd/kfd_chardev.c"
OPS = "user/tinygrad/runtime/ops_amd.py"
UDMABUF = "kernel/drivers/dma-buf/udmabuf.c"
UDMABUF_H = "kernel/include/uapi/linux/udmabuf.h"

USER_PY = """import fcntl
from fcntl import ioctl

import uapi


def create(fd, buf):
    return fcntl.ioctl(fd, uapi.UDMABUF_CREATE, buf)


def create_list(fd, buf):
    return ioctl(fd, UDMABUF_CREATE_LIST, buf, True)


def other(fd, request):
    return fcntl.ioctl(fd, request, 0)
"""


def _ls(root: Path) -> list[dict[str, object]]:
    result = subprocess.run(
        [str(BIN / "stackmap"), "ls", "-C", str(root), "--kind", "interface", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    rows: list[dict[str, object]] = json.loads(result.stdout)
    return rows


def _sides(row: dict[str, object]) -> tuple[str, list[str], list[str]]:
    def at(key: str) -> list[str]:
        return [site["at"] for site in row[key]]  # type: ignore[attr-defined, index]

    return str(row["source"]), at("providers"), at("consumers")


def test_kfd_ioctls_are_interfaces_of_the_user_kernel_pair(tmp_path: Path) -> None:
    root = tmp_path / "kfd"
    shutil.copytree(FOREIGN / "kfd", root)
    ingest(root, embed=False, progress=False)
    rows = _ls(root)
    assert {r["id"]: (r["layer_pair"], *_sides(r)) for r in rows} == {
        "interface:user_kernel.AMDKFD_IOC_CREATE_QUEUE": (
            "user_kernel",
            "discovered",
            [f"{CHARDEV}:126", f"{KFD_H}:69"],
            [f"{OPS}:18"],
        ),
        "interface:user_kernel.AMDKFD_IOC_GET_VERSION": (
            "user_kernel",
            "discovered",
            [f"{CHARDEV}:123", f"{KFD_H}:66"],
            [f"{OPS}:14"],
        ),
    }
    consumer = rows[0]["consumers"][0]  # type: ignore[index]
    assert consumer["node"] == "symbol:tinygrad.runtime.ops_amd.KFDIface.create_queue"
    g = load_map(root)
    iid = "interface:user_kernel.AMDKFD_IOC_CREATE_QUEUE"
    assert sorted((s, a["kind"]) for s, t, a in g.edges() if t == iid) == [
        ("component:kernel.include", "provides"),
        ("component:user.tinygrad", "consumes"),
        ("layer:kernel", "provides"),
        (f"symbol:c:{KFD_H}:AMDKFD_IOC_CREATE_QUEUE", "implements"),
    ]


def test_python_fcntl_ioctl_is_a_use_of_the_kernel_ioctl(tmp_path: Path) -> None:
    root = tmp_path / "udmabuf"
    shutil.copytree(FOREIGN / "udmabuf", root)
    (root / "user").mkdir()
    (root / "user" / "driver.py").write_text(USER_PY)
    (root / "user" / "uapi.py").write_text("UDMABUF_CREATE = 0x40187542\n")
    config = (root / "stackmap.toml").read_text()
    head, _, layers = config.partition("[[layers]]")
    user = '[[layers]]\nid = "user"\npaths = ["user/**"]\n\n'
    (root / "stackmap.toml").write_text(
        head.replace("tests = []", 'tests = []\npython_roots = ["user"]')
        + user
        + "[[layers]]"
        + layers
    )
    ingest(root, embed=False, progress=False)
    g = load_map(root)
    uses = {
        (s, t, a["path"], a["line"]) for s, t, a in g.edges() if a.get("binding") == "ioctl_use"
    }
    uapi = f"symbol:c:{UDMABUF_H}:"
    assert uses == {
        ("symbol:driver.create", uapi + "UDMABUF_CREATE", "user/driver.py", 8),
        ("symbol:driver.create_list", uapi + "UDMABUF_CREATE_LIST", "user/driver.py", 12),
    }
    rows = {r["id"]: _sides(r) for r in _ls(root)}
    assert rows == {
        "interface:user_kernel.UDMABUF_CREATE": (
            "discovered",
            [f"{UDMABUF}:24", f"{UDMABUF_H}:30"],
            ["user/driver.py:8"],
        ),
        "interface:user_kernel.UDMABUF_CREATE_LIST": (
            "discovered",
            [f"{UDMABUF}:27", f"{UDMABUF_H}:31"],
            ["user/driver.py:12"],
        ),
    }


def test_contract_entries_are_matched_to_what_the_code_uses(minirepo: Path) -> None:
    runtime = minirepo / "runtime" / "runtime.cpp"
    runtime.write_text(
        runtime.read_text().replace("  release(addr);", "  release(addr);\n  mini_ioctl(0, 0);")
    )
    ingest(minirepo, embed=False, progress=False)
    rows = {r["id"]: _sides(r) for r in _ls(minirepo)}
    assert rows == {
        "interface:compiler_runtime.launch": ("contract", [], []),
        "interface:runtime_driver.alloc_pages": (
            "both",
            ["driver/mini_drv.c:5"],
            ["runtime/runtime.cpp:7"],
        ),
        "interface:runtime_driver.alloc_rpc": ("contract", [], []),
        "interface:runtime_driver.free_pages": (
            "both",
            ["driver/mini_drv.c:11"],
            ["runtime/runtime.cpp:13"],
        ),
        "interface:runtime_driver.mini_ioctl": (
            "discovered",
            ["driver/mini_drv.c:13"],
            ["runtime/runtime.cpp:9"],
        ),
    }
    listed = subprocess.run(
        [str(BIN / "stackmap"), "ls", "-C", str(minirepo), "--kind", "interface"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.stdout.splitlines()[-1] == (
        "interfaces: 2 in code and contract, 1 discovered without a contract, "
        "2 in a contract without code using them"
    )


def test_ops_table_slots_filled_by_a_backend_are_interfaces_of_the_core(tmp_path: Path) -> None:
    root = tmp_path / "ggml"
    shutil.copytree(FOREIGN / "ggml", root)
    ingest(root, embed=False, progress=False)
    impl, core = "ggml/src/ggml-backend-impl.h", "ggml/src/ggml-backend.cpp"
    blas = "ggml/src/ggml-blas/ggml-blas.cpp"
    assert {r["id"]: (r["layer_pair"], *_sides(r)) for r in _ls(root)} == {
        "interface:ggml_backends.ggml_backend_i::free": (
            "ggml_backends",
            "discovered",
            [f"{impl}:15", f"{blas}:24"],
            [f"{core}:16"],
        ),
        "interface:ggml_backends.ggml_backend_i::get_name": (
            "ggml_backends",
            "discovered",
            [f"{impl}:13", f"{blas}:23"],
            [f"{core}:8"],
        ),
        "interface:ggml_backends.ggml_backend_i::graph_compute": (
            "ggml_backends",
            "discovered",
            [f"{impl}:37", f"{blas}:35"],
            [f"{core}:22"],
        ),
        "interface:llama_ggml.ggml_backend_free": (
            "llama_ggml",
            "discovered",
            [f"{core}:11"],
            ["src/llama-model-loader.cpp:5"],
        ),
    }
