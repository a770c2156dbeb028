"""``stackmap init --contracts`` on a real user-space + kernel driver pair (fixtures/foreign/kfd):
a drafted contract listing the discovered ioctls, open questions where the code is silent, and
``stackmap check`` reporting each open question as a hole until it is answered."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from mapper.ingest import ingest
from tests.mapper.conftest import FIXTURES

BIN = Path(sys.executable).parent
KFD_H = "kernel/include/uapi/linux/kfd_ioctl.h"
FIELDS = ["sync", "synchronization", "memory", "errors"]


def _stackmap(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "stackmap"), *argv], capture_output=True, text=True, timeout=120
    )


def _findings(root: Path) -> list[tuple[str, str, str | None]]:
    result = _stackmap("check", str(root), "--json")
    report = json.loads(result.stdout)
    return [(f["rule"], f["subject"], f["map"]) for f in report["findings"]]


def test_drafted_contract_lists_interfaces_and_asks_what_the_code_cannot_answer(
    tmp_path: Path,
) -> None:
    root = tmp_path / "kfd"
    shutil.copytree(FIXTURES / "foreign" / "kfd", root)
    drafted = _stackmap("init", str(root), "--contracts")
    assert drafted.returncode == 0, drafted.stderr
    path = root / "contracts" / "user_kernel.yaml"
    assert drafted.stdout.splitlines() == [str(path)]
    contract = yaml.safe_load(path.read_text())
    assert (contract["contract"], contract["upper"], contract["lower"]) == (
        "user_kernel",
        "user",
        "kernel",
    )
    entries = contract["interfaces"]
    assert [(e["id"], e["kind"], e["symbol"]) for e in entries] == [
        ("user_kernel.AMDKFD_IOC_CREATE_QUEUE", "ioctl", f"{KFD_H}:AMDKFD_IOC_CREATE_QUEUE"),
        ("user_kernel.AMDKFD_IOC_GET_VERSION", "ioctl", f"{KFD_H}:AMDKFD_IOC_GET_VERSION"),
    ]
    for entry in entries:
        assert not set(FIELDS) & set(entry)  # nothing invented
        assert [q["field"] for q in entry["open_questions"]] == FIELDS
    create = entries[0]
    assert "kfd_chardev.c:89" in create["description"]  # the kernel's dispatcher
    assert "user/tinygrad/runtime/ops_amd.py:18" in create["description"]  # the use site
    memory = create["open_questions"][2]
    assert memory["reason"] == (
        "kfd_ioctl_create_queue_args crosses the boundary; the code does not say who owns it"
    )

    found = _findings(root)
    assert found == [
        ("SM402", f"{e['id']}:{field}", f"contracts/user_kernel.yaml:{line}")
        for e, lines in zip(entries, ([19, 23, 27, 31], [42, 46, 50, 54]), strict=True)
        for field, line in zip(FIELDS, lines, strict=True)
    ]
    report = ingest(root, embed=False, progress=False)
    holes = {h.node: h.missing for h in report.holes if h.node.startswith("interface:")}
    assert holes == {
        "interface:user_kernel.AMDKFD_IOC_CREATE_QUEUE": tuple(FIELDS),
        "interface:user_kernel.AMDKFD_IOC_GET_VERSION": tuple(FIELDS),
    }

    text = path.read_text().replace(
        "  kind: ioctl\n  symbol: kernel/include/uapi/linux/kfd_ioctl.h:AMDKFD_IOC_CREATE_QUEUE\n",
        "  kind: ioctl\n  symbol: kernel/include/uapi/linux/kfd_ioctl.h:AMDKFD_IOC_CREATE_QUEUE\n"
        "  sync: sync (the ioctl returns once the queue exists)\n",
    )
    path.write_text(text)
    assert [s for _, s, _ in _findings(root)][:3] == [
        "user_kernel.AMDKFD_IOC_CREATE_QUEUE:synchronization",
        "user_kernel.AMDKFD_IOC_CREATE_QUEUE:memory",
        "user_kernel.AMDKFD_IOC_CREATE_QUEUE:errors",
    ]
    assert len(_findings(root)) == 7
    report = ingest(root, embed=False, progress=False)
    holes = {h.node: h.missing for h in report.holes if h.node.startswith("interface:")}
    assert holes["interface:user_kernel.AMDKFD_IOC_CREATE_QUEUE"] == tuple(FIELDS[1:])

    again = _stackmap("init", str(root), "--contracts")
    assert again.returncode == 0 and again.stdout == ""
    assert "no adjacent layer pair without a contract" in again.stderr
