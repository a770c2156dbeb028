"""``scripts/foreign_eval.py`` on the KFD fixture pair: the ground truth found by text search,
ioctl recall from the bindings and interface recall from the listed interfaces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KFD = REPO / "tests" / "mapper" / "fixtures" / "foreign" / "kfd"


def test_kfd_pair_figures(tmp_path: Path) -> None:
    out = tmp_path / "kfd.json"
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "foreign_eval.py"),
            "--user",
            str(KFD / "user" / "tinygrad"),
            "--kernel",
            str(KFD / "kernel" / "drivers"),
            "--kernel",
            str(KFD / "kernel" / "include"),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())
    assert figures["ioctls_truth"] == 2
    assert figures["ioctl_recall"] == 1.0
    assert figures["interface_recall"] == 1.0
    assert figures["interfaces_missed"] == []
    assert figures["interfaces_by_source"] == {"discovered": 2}
    assert figures["kernel_parse_warning_rate"] == 0.0
    assert figures["discovered"]["AMDKFD_IOC_CREATE_QUEUE"] == {
        "dispatchers": ["kernel/drivers/gpu/drm/amd/amdkfd/kfd_chardev.c:126"],
        "users": ["user/tinygrad/runtime/ops_amd.py:18"],
    }
