"""Drafted contracts list the error codes a provider passes on from a call into another file
(``return err;`` after ``err = helper(…)``, ``return helper(…)``), each with its call chain:
on the KFD create-queue path (fixtures/foreign/kfd with kfd-queue laid over it) and on a small
chain that shows the depth limit and what is not followed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from mapper.ingest import ingest, load_map
from mapper.ingest.draft_evidence import EvidenceReader
from mapper.model import NodeKind
from tests.mapper.conftest import FIXTURES
from tests.mapper.toy_map import write_tree

BIN = Path(sys.executable).parent
AMDKFD = "kernel/drivers/gpu/drm/amd/amdkfd"
CHARDEV = f"{AMDKFD}/kfd_chardev.c"
PQM = f"{AMDKFD}/kfd_process_queue_manager.c"
DRV = {
    "stackmap.toml": '[stackmap]\nname = "passed-on"\ndocs = []\ntests = []\n\n'
    '[[layers]]\nid = "app"\nname = "App"\npaths = ["app/**"]\n\n'
    '[[layers]]\nid = "drv"\nname = "Driver"\npaths = ["drv/**"]\n',
    "app/main.c": '#include "../drv/drv.h"\n\nint run(void)\n{\n\treturn drv_submit(1);\n}\n',
    "drv/drv.h": "int drv_submit(int n);\n",
    "drv/queue.h": "int q_reserve(int n);\nint stats_bump(int n);\n",
    "drv/submit.c": '#include "drv.h"\n#include "queue.h"\n\n'
    "int drv_submit(int n)\n{\n\tint ret;\n\n"
    "\tif (stats_bump(n))\n\t\treturn -EIO;\n"  # a result tested, not passed on
    "\tret = q_reserve(n);\n\tif (ret)\n\t\treturn ret;\n\treturn 0;\n}\n",
    "drv/queue.c": '#include "queue.h"\n\n'
    "int stats_bump(int n)\n{\n\treturn n > 1 ? -ENODEV : 0;\n}\n\n"
    "int q_reserve(int n)\n{\n\tif (n < 0)\n\t\treturn -EBUSY;\n\treturn ring_alloc(n);\n}\n",
    "drv/ring.c": "int ring_alloc(int n)\n{\n\tint err;\n\n\terr = page_get(n);\n\tif (err)\n"
    "\t\tgoto out;\n\tif (n > 4)\n\t\terr = -ENOSPC;\nout:\n\treturn err;\n}\n",
    "drv/page.c": "int page_get(int n)\n{\n\tif (!n)\n\t\treturn -EFAULT;\n"
    "\tif (n > 64)\n\t\treturn PTR_ERR(pool_page(n));\n"  # an errno passed on, not an enum
    "\treturn pool_take(n);\n}\n",
    "drv/pool.c": "int pool_take(int n)\n{\n\treturn n > 8 ? -EAGAIN : q_reserve(n - 1);\n}\n",
}


def _init_contracts(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "stackmap"), "init", str(root), "--contracts"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_errors_the_create_queue_handler_passes_on_from_the_queue_manager(tmp_path: Path) -> None:
    root = tmp_path / "kfd"
    shutil.copytree(FIXTURES / "foreign" / "kfd", root)
    shutil.copytree(FIXTURES / "foreign" / "kfd-queue", root, dirs_exist_ok=True)
    drafted = _init_contracts(root)
    assert drafted.returncode == 0, drafted.stderr
    contract = yaml.safe_load((root / "contracts" / "user_kernel.yaml").read_text())
    create, version = contract["interfaces"]
    assert create["id"] == "user_kernel.AMDKFD_IOC_CREATE_QUEUE"
    assert create["errors"].startswith(
        "Drafted from the code, review: -EINVAL, -EFAULT, -ESRCH, -ENOSPC, -ENOMEM, -EPERM "
        "reported by the provider or passed on to it by a function it calls "
        "(evidence.errors, with the call chain);"
    )
    # `err = pqm_create_queue(…)` (kfd_chardev.c:92) then `return err;`: the queue manager in
    # another file is read; its -EINVAL (default queue type) is already listed from the handler,
    # and -ENOMEM deeper down (find_available_queue_slot, init_user_queue → init_queue) too
    via = f"via pqm_create_queue ({CHARDEV}:92)"
    assert create["evidence"]["errors"] == [
        f"-EINVAL at {CHARDEV}:58",
        f"-EFAULT at {CHARDEV}:65",
        f"-ESRCH at {CHARDEV}:88",
        f"-ENOSPC at {PQM}:126 {via}",
        f"-ENOMEM at {PQM}:143 {via}",
        f"-EPERM at {PQM}:173 {via}",
    ]
    assert "errors" not in version and "evidence" not in version  # no call passes anything on
    assert [q["field"] for q in create["open_questions"]] == ["sync", "synchronization", "memory"]


def test_passed_on_results_are_followed_to_the_depth_limit_and_only_when_returned(
    tmp_path: Path,
) -> None:
    write_tree(tmp_path, DRV)
    ingest(tmp_path, embed=False, progress=False)
    graph = load_map(tmp_path)
    (interface,) = [data for _, data in graph.nodes(NodeKind.INTERFACE)]
    deeper = EvidenceReader(graph, tmp_path, depth=4).evidence(interface)
    assert [e.name for e in deeper.errors] == ["-EIO", "-EBUSY", "-ENOSPC", "-EFAULT", "-EAGAIN"]
    assert deeper.bodies == 5  # drv_submit, then q_reserve, ring_alloc, page_get, pool_take
    alone = EvidenceReader(graph, tmp_path, depth=0).evidence(interface)
    assert [str(e) for e in alone.errors] == ["-EIO at drv/submit.c:9"] and alone.bodies == 1

    assert _init_contracts(tmp_path).returncode == 0  # the default depth: three calls down
    (entry,) = yaml.safe_load((tmp_path / "contracts" / "app_drv.yaml").read_text())["interfaces"]
    q_reserve = "q_reserve (drv/submit.c:10)"
    ring_alloc = f"{q_reserve} → ring_alloc (drv/queue.c:12)"
    # not -ENODEV: stats_bump's result is tested, not passed on; not -EAGAIN: pool_take is a
    # fourth call down (submit → q_reserve → ring_alloc → page_get → pool_take)
    assert entry["evidence"] == {
        "errors": [
            "-EIO at drv/submit.c:9",
            f"-EBUSY at drv/queue.c:11 via {q_reserve}",
            f"-ENOSPC at drv/ring.c:9 via {ring_alloc}",
            f"-EFAULT at drv/page.c:4 via {ring_alloc} → page_get (drv/ring.c:5)",
        ]
    }
