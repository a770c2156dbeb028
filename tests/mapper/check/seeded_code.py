"""Seeded drifts on the code side: signatures against contracts (SM1xx), layering (SM2xx)."""

from __future__ import annotations

from tests.mapper.check.seeded import Drift, replace_in

CODE_DRIFTS = [
    Drift(
        "rename-parameter",
        (
            replace_in("fx/umd/session.py", "submit(self, blob: bytes", "submit(self, data: bytes"),
            replace_in("fx/umd/session.py", "len(blob)", "len(data)"),
        ),
        (
            (
                "SM102",
                "fx/umd/session.py:10",
                "contracts/runtime_umd.yaml:15",
                "map-stale",
                ("interface:runtime_umd.submit", "symbol:fx.umd.session.Session.submit"),
            ),
        ),
    ),
    Drift(
        "contract-renames-parameter",
        (
            replace_in(
                "contracts/runtime_umd.yaml",
                "{name: blob, type: bytes}",
                "{name: payload, type: bytes}",
            ),
        ),
        (
            (
                "SM102",
                "fx/umd/session.py:10",
                "contracts/runtime_umd.yaml:15",
                "code-wrong",
                ("interface:runtime_umd.submit", "symbol:fx.umd.session.Session.submit"),
            ),
        ),
    ),
    Drift(
        "async-becomes-sync",
        (replace_in("fx/umd/session.py", "async def drain", "def drain"),),
        (
            (
                "SM102",
                "fx/umd/session.py:15",
                "contracts/runtime_umd.yaml:27",
                "map-stale",
                ("interface:runtime_umd.drain", "symbol:fx.umd.session.Session.drain"),
            ),
        ),
    ),
    Drift(
        "c-parameter-type-changes",
        (
            replace_in(
                "fx/umd/native/umd_api.c", "const void *blob, size_t n)", "const void *blob, int n)"
            ),
        ),
        (
            (
                "SM102",
                "fx/umd/native/umd_api.c:4",
                "contracts/runtime_umd.yaml:39",
                "map-stale",
                (
                    "interface:runtime_umd.native_submit",
                    "symbol:c:fx/umd/native/umd_api.c:umd_submit",
                ),
            ),
        ),
    ),
    Drift(
        "delete-implementation",
        (
            replace_in(
                "fx/kmd/device.py",
                "    def free(self, va: int) -> None:\n        return None\n",
                "",
            ),
        ),
        (
            (
                "SM101",
                "fx/kmd/device.py",
                "contracts/umd_kmd.yaml:20",
                "map-stale",
                ("interface:umd_kmd.free", "file:fx/kmd/device.py"),
            ),
        ),
    ),
    Drift(
        "undeclared-cross-layer-call",
        (
            replace_in(
                "fx/umd/session.py",
                "from fx.kmd.device import Device",
                "from fx.kmd.device import Device, scrub",
            ),
            replace_in(
                "fx/umd/session.py",
                "        self.device.free(va)\n",
                "        self.device.free(va)\n        scrub(va)\n",
            ),
        ),
        (
            (
                "SM201",
                "fx/umd/session.py:3",
                "contracts/umd_kmd.yaml",
                "map-stale",
                ("file:fx/umd/session.py", "file:contracts/umd_kmd.yaml"),
            ),
        ),
    ),
    Drift(
        "upward-import",
        (
            replace_in(
                "fx/kmd/device.py",
                '"""Device memory."""\n',
                '"""Device memory."""\n\nfrom fx.umd.session import Session\n',
            ),
        ),
        (
            (
                "SM202",
                "fx/kmd/device.py:3",
                "stackmap.toml:22",
                "code-wrong",
                ("file:fx/kmd/device.py",),
            ),
        ),
    ),
    Drift(
        "python-import-skips-a-layer",
        (
            replace_in(
                "fx/runtime/engine.py",
                "from fx.umd.session import Session\n",
                "from fx.kmd.device import Device\nfrom fx.umd.session import Session\n",
            ),
        ),
        (
            (
                "SM203",
                "fx/runtime/engine.py:3",
                "stackmap.toml:10",
                "code-wrong",
                ("file:fx/runtime/engine.py",),
            ),
        ),
    ),
    Drift(
        "skip-allowed-when-layering-is-relaxed",
        (
            replace_in(
                "fx/runtime/engine.py",
                "from fx.umd.session import Session\n",
                "from fx.kmd.device import Device\nfrom fx.umd.session import Session\n",
            ),
            replace_in("stackmap.toml", 'name = "fx"\n', 'name = "fx"\nlayering = "relaxed"\n'),
        ),
        (),  # the same skip as above: any layer below may be used
    ),
    Drift(
        "c-include-skips-a-layer",
        (
            replace_in(
                "fx/runtime/native/launch.c",
                '#include "umd_api.h"\n',
                '#include "umd_api.h"\n#include "fx_kmd.h"\n',
            ),
        ),
        (
            (
                "SM203",
                "fx/runtime/native/launch.c:3",
                "stackmap.toml:10",
                "code-wrong",
                ("file:fx/runtime/native/launch.c",),
            ),
        ),
    ),
    Drift(
        "c-call-goes-upward",
        (
            replace_in(
                "fx/kmd/native/kmd.c",
                "    return queue;",
                "    return launch((const void *)0, (size_t)queue);",
            ),
        ),
        (
            (
                "SM202",
                "fx/kmd/native/kmd.c:4",
                "stackmap.toml:22",
                "code-wrong",
                ("symbol:c:fx/kmd/native/kmd.c:kmd_ring",),
            ),
        ),
    ),
]
