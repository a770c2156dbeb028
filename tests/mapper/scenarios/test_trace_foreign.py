"""``scenario trace`` on a stack nobody described (fixtures/foreign/kfd, layers ranked by
``stackmap init``): a layer the path skips but the path's code calls into is a branch, not a
hole that claims no call reaches it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from mapper.impact import open_view
from mapper.ingest import ingest
from mapper.scenarios.trace import walk_trace
from tests.mapper.conftest import FIXTURES

BIN = Path(sys.executable).parent
ENTRY = "symbol:tinygrad.runtime.ops_amd.KFDIface.create_queue"
USE = "user/tinygrad/runtime/ops_amd.py:18"


def test_the_kernel_driver_between_a_python_driver_and_the_uapi_header_is_a_branch(
    tmp_path: Path,
) -> None:
    root = tmp_path / "kfd"
    shutil.copytree(FIXTURES / "foreign" / "kfd", root)
    (root / "stackmap.toml").unlink()
    stackmap = str(BIN / "stackmap")
    subprocess.run([stackmap, "init", str(root), "--write"], check=True, capture_output=True)
    ingest(root, embed=False, progress=False)
    walk = walk_trace(open_view(root), ENTRY)
    # ranked top to bottom: user_tinygrad_runtime, kmd (the driver), layer (the UAPI header)
    assert [(s.node, s.layer, s.cite) for s in walk.steps] == [
        (ENTRY, "user_tinygrad_runtime", "-"),
        ("symbol:c:kernel/include/uapi/linux/kfd_ioctl.h:AMDKFD_IOC_CREATE_QUEUE", "layer", USE),
    ]
    chardev = "symbol:c:kernel/drivers/gpu/drm/amd/amdkfd/kfd_chardev.c:kfd_ioctl_create_queue"
    assert [(s.node, s.layer, s.depth, s.cite) for s in walk.branches] == [
        (chardev, "kmd", 1, USE)  # the ioctl's handler, routed from the same use site
    ]
    assert walk.holes == ()
    shown = subprocess.run(
        [stackmap, "scenario", "trace", ENTRY, "-C", str(root)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert f"  also kmd: {chardev}  {USE} (a call off the path)" in shown
    assert not [line for line in shown if line.startswith("  HOLE kmd: no call edge")]
    as_json = subprocess.run(
        [stackmap, "scenario", "trace", ENTRY, "-C", str(root), "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(as_json)["branches"] == [
        {"node": chardev, "layer": "kmd", "depth": 1, "at": USE}
    ]
