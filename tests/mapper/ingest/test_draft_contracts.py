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
from tests.mapper.toy_map import write_tree

BIN = Path(sys.executable).parent
KFD_H = "kernel/include/uapi/linux/kfd_ioctl.h"
CHARDEV = "kernel/drivers/gpu/drm/amd/amdkfd/kfd_chardev.c"
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
    create, version = entries
    # errors the handler and the helper it calls show; nothing else invented
    assert not {"sync", "synchronization", "memory"} & set(create) and "errors" not in version
    assert create["errors"].startswith("Drafted from the code, review: -EINVAL, -EFAULT, -ESRCH ")
    assert create["evidence"] == {
        "errors": [
            f"-EINVAL at {CHARDEV}:58",
            f"-EFAULT at {CHARDEV}:65",
            f"-ESRCH at {CHARDEV}:88",
        ],
        "synchronization": [f"mutex_lock at {CHARDEV}:84"],
    }
    assert "evidence" not in version  # kfd_ioctl_get_version only copies two numbers
    assert [q["field"] for q in create["open_questions"]] == FIELDS[:3]
    assert [q["field"] for q in version["open_questions"]] == FIELDS
    assert version["open_questions"][3]["reason"] == (
        "the 1 providing function body(ies) read return no negative errno or error enum member "
        "and raise nothing"
    )
    assert create["open_questions"][1]["reason"] == (
        f"the provider blocks (mutex_lock at {CHARDEV}:84), but the code does not say who "
        "waits on what"
    )
    assert "kfd_chardev.c:126" in create["description"]  # the kernel's dispatcher
    assert "user/tinygrad/runtime/ops_amd.py:18" in create["description"]  # the use site
    memory = create["open_questions"][2]
    assert memory["reason"] == (
        "kfd_ioctl_create_queue_args crosses the boundary; the code does not say who owns it"
    )

    found = _findings(root)
    assert found == [
        ("SM402", f"{e['id']}:{field}", f"contracts/user_kernel.yaml:{line}")
        for e, lines in zip(entries, ([28, 32, 37], [48, 52, 56, 60]), strict=True)
        for field, line in zip(FIELDS, lines, strict=False)
    ]
    report = ingest(root, embed=False, progress=False)
    holes = {h.node: h.missing for h in report.holes if h.node.startswith("interface:")}
    assert holes == {
        "interface:user_kernel.AMDKFD_IOC_CREATE_QUEUE": tuple(FIELDS[:3]),
        "interface:user_kernel.AMDKFD_IOC_GET_VERSION": tuple(FIELDS),
    }

    text = path.read_text().replace(
        "  kind: ioctl\n  symbol: kernel/include/uapi/linux/kfd_ioctl.h:AMDKFD_IOC_CREATE_QUEUE\n",
        "  kind: ioctl\n  symbol: kernel/include/uapi/linux/kfd_ioctl.h:AMDKFD_IOC_CREATE_QUEUE\n"
        "  sync: sync (the ioctl returns once the queue exists)\n",
    )
    path.write_text(text)
    assert [s for _, s, _ in _findings(root)][:2] == [
        "user_kernel.AMDKFD_IOC_CREATE_QUEUE:synchronization",
        "user_kernel.AMDKFD_IOC_CREATE_QUEUE:memory",
    ]
    assert len(_findings(root)) == 6
    report = ingest(root, embed=False, progress=False)
    holes = {h.node: h.missing for h in report.holes if h.node.startswith("interface:")}
    assert holes["interface:user_kernel.AMDKFD_IOC_CREATE_QUEUE"] == tuple(FIELDS[1:3])

    again = _stackmap("init", str(root), "--contracts")
    assert again.returncode == 0 and again.stdout == ""
    assert "no adjacent layer pair without a contract" in again.stderr


def test_drafted_python_contract_shows_raised_errors_and_blocking_calls(tmp_path: Path) -> None:
    files = {
        "stackmap.toml": '[stackmap]\nname = "py-pair"\ndocs = []\ntests = []\n\n'
        '[[layers]]\nid = "app"\nname = "App"\npaths = ["app/**"]\n\n'
        '[[layers]]\nid = "lib"\nname = "Lib"\npaths = ["lib/**"]\n',
        "app/__init__.py": "",
        "app/main.py": "from lib.queue import submit\n\n\ndef go(job):\n    return submit(job)\n",
        "lib/__init__.py": "",
        "lib/queue.py": "import time\n\n\n"
        "def _check(job):\n"
        "    if job is None:\n"
        "        raise ValueError('no job')  # time.sleep(1) in a comment is no call\n"
        "\n\n"
        "def submit(job):\n"
        "    _check(job)\n"
        "    if job == 'late':\n"
        "        return Status.ERR_TIMEOUT\n"
        "    time.sleep(0.1)\n"
        "    job.done.wait()\n"
        "    raise RuntimeError('never')\n",
    }
    write_tree(tmp_path, files)
    drafted = _stackmap("init", str(tmp_path), "--contracts")
    assert drafted.returncode == 0, drafted.stderr
    (entry,) = yaml.safe_load((tmp_path / "contracts" / "app_lib.yaml").read_text())["interfaces"]
    assert entry["evidence"] == {
        "errors": [
            "ValueError at lib/queue.py:6",
            "Status.ERR_TIMEOUT at lib/queue.py:12",
            "RuntimeError at lib/queue.py:15",
        ],
        "synchronization": ["time.sleep at lib/queue.py:13", ".wait at lib/queue.py:14"],
    }
    assert [q["field"] for q in entry["open_questions"]] == FIELDS[:3]
    assert [f for f in _findings(tmp_path) if f[0] == "SM402"] == [
        ("SM402", f"app_lib.lib.queue.submit:{field}", f"contracts/app_lib.yaml:{line}")
        for field, line in zip(FIELDS[:3], [31, 35, 40], strict=True)
    ]


def test_drafted_entries_naming_cpp_members_resolve_to_their_definition(tmp_path: Path) -> None:
    """A drafted ``symbol`` is ``path:NAME``; for a C++ member NAME is ``Type::member``. Each
    resolves to the very definition, so `check` reports no SM101 on a contract it just drafted."""
    root = tmp_path / "ggml"
    shutil.copytree(FIXTURES / "foreign" / "ggml", root)
    assert _stackmap("init", str(root), "--contracts").returncode == 0
    entries = yaml.safe_load((root / "contracts" / "ggml_backends.yaml").read_text())["interfaces"]
    impl = "ggml/src/ggml-backend-impl.h:ggml_backend_i::"
    assert [e["symbol"] for e in entries] == [
        impl + m for m in ("free", "get_name", "graph_compute")
    ]
    found = _findings(root)
    assert [f for f in found if f[0] != "SM402"] == [
        ("SM202", "ggml/src/ggml-blas/ggml-blas.cpp->ggml", "stackmap.toml:18"),
        ("SM202", "ggml/src/ggml-cpu/traits.h->ggml", "stackmap.toml:18"),
    ]
    assert len(found) == 2 + 16  # 4 open questions for each of the 4 drafted entries


def test_ioctls_are_drafted_with_the_driver_that_dispatches_them_when_init_ranks_layers(
    tmp_path: Path,
) -> None:
    """``stackmap init`` ranks the KFD pair into three layers: the Python driver, the kernel
    driver (kmd), the UAPI header (layer). The ioctls are defined two layers down, but the kernel
    driver dispatches them: they are interfaces of the adjacent pair and drafted there."""
    root = tmp_path / "kfd"
    shutil.copytree(FIXTURES / "foreign" / "kfd", root)
    (root / "stackmap.toml").unlink()
    assert _stackmap("init", str(root), "--write").returncode == 0
    drafted = _stackmap("init", str(root), "--contracts")
    path = root / "contracts" / "user_tinygrad_runtime_kmd.yaml"
    assert drafted.stdout.splitlines() == [str(path)], drafted.stderr
    contract = yaml.safe_load(path.read_text())
    assert (contract["upper"], contract["lower"]) == ("user_tinygrad_runtime", "kmd")
    assert [(e["kind"], e["symbol"]) for e in contract["interfaces"]] == [
        ("ioctl", f"{KFD_H}:AMDKFD_IOC_CREATE_QUEUE"),
        ("ioctl", f"{KFD_H}:AMDKFD_IOC_GET_VERSION"),
    ]
    assert [(f[0], f[1].rpartition(":")[0]) for f in _findings(root)] == [
        ("SM402", f"user_tinygrad_runtime_kmd.AMDKFD_IOC_{name}")
        for name, fields in (("CREATE_QUEUE", 3), ("GET_VERSION", 4))
        for _ in range(fields)
    ]  # the open questions only: no SM101, nothing undeclared


def test_every_use_the_layer_check_sees_is_drafted_so_none_is_left_undeclared(
    tmp_path: Path,
) -> None:
    """Beside the interfaces the map discovers (``submit``, called; ``LIMIT``, named), the
    drafts list what the layer check (SM201) sees besides: a module imported whole
    (``plugins``), a lower-case object passed on (``registry``), a class whose only use is a
    method it inherits from outside (``Header.from_buffer_copy``) and a name the parser sees
    no definition of (``DEFAULT_A``, assigned under an ``if``: its module is drafted). Before,
    each of these was an SM201 on a fresh draft; now check reports only the open questions."""
    files = {
        "stackmap.toml": '[stackmap]\nname = "uses"\ndocs = []\ntests = []\n\n'
        '[[layers]]\nid = "app"\nname = "App"\npaths = ["app/**"]\n\n'
        '[[layers]]\nid = "lib"\nname = "Lib"\npaths = ["lib/**"]\n',
        "app/__init__.py": "",
        "app/main.py": "from lib import plugins\n"
        "from lib.queue import LIMIT, registry, submit\n"
        "from lib.structs import Header\n"
        "from lib.tune import DEFAULT_A\n\n\n"
        "def go(job):\n"
        "    header = Header.from_buffer_copy(job)\n"
        "    return submit(job, LIMIT, registry, header, plugins.table, DEFAULT_A)\n",
        "lib/__init__.py": "",
        "lib/plugins.py": "table = {}\n",
        "lib/queue.py": "LIMIT = 4\nregistry = {}\n\n\ndef submit(*args):\n    return args\n",
        "lib/structs.py": "import ctypes\n\n\nclass Header(ctypes.Structure):\n    _fields_ = []\n",
        "lib/tune.py": "import sys\n\nif sys.platform == 'linux':\n    DEFAULT_A = 1\n"
        "else:\n    DEFAULT_A = 2\n",
    }
    write_tree(tmp_path, files)
    drafted = _stackmap("init", str(tmp_path), "--contracts")
    assert drafted.returncode == 0, drafted.stderr
    entries = yaml.safe_load((tmp_path / "contracts" / "app_lib.yaml").read_text())["interfaces"]
    assert [(e["id"], e["kind"], e["symbol"]) for e in entries] == [
        ("app_lib.lib.queue.LIMIT", "constant", "lib.queue.LIMIT"),
        ("app_lib.lib.queue.submit", "function", "lib.queue.submit"),
        ("app_lib.lib.plugins", "module", "lib.plugins"),
        ("app_lib.lib.queue.registry", "constant", "lib.queue.registry"),
        ("app_lib.lib.structs.Header", "class", "lib.structs.Header"),
        ("app_lib.lib.tune", "module", "lib.tune"),
    ]
    assert entries[5]["description"].startswith(
        "module lib.tune, defined at lib/tune.py; used by app as lib.tune.DEFAULT_A (first by "
        "import) in 1 file(s): app/main.py:4."
    )
    found = _findings(tmp_path)
    assert [f for f in found if f[0] != "SM402"] == []
    assert sorted({f[1].rpartition(":")[0] for f in found}) == sorted(e["id"] for e in entries)
    assert len(found) == sum(len(e["open_questions"]) for e in entries) == 24
