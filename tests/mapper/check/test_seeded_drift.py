"""The seeded-drift suite: one known drift per rule applied to the clean fixture stack.

The clean stack has zero findings. Each case commits one drift on top of it (so the git
classification is exercised) and asserts the exact finding set: rule, code location, map
location, classification and the map nodes each finding is about. Recall on the seeded set
is 100 %, false positives 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from mapper.check import run_check

Edit = Callable[[Path], None]


def replace_in(path: str, old: str, new: str) -> Edit:
    def edit(root: Path) -> None:
        file = root / path
        text = file.read_text(encoding="utf-8")
        assert old in text, f"{old!r} not in {path}"
        file.write_text(text.replace(old, new, 1), encoding="utf-8")

    return edit


def remove(path: str) -> Edit:
    def edit(root: Path) -> None:
        (root / path).unlink()

    return edit


@dataclass(frozen=True)
class Drift:
    id: str
    edits: tuple[Edit, ...]
    # rule, code location, map location, classification, ids of the map nodes it is about
    expected: tuple[tuple[str, str | None, str | None, str, tuple[str, ...]], ...]


KMD_H = "fx/kmd/include/fx_kmd.h"
DRIFTS = [
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
    Drift(
        "delete-symbol-a-doc-names",
        (
            replace_in(
                "fx/kmd/device.py", "\n\ndef scrub(va: int) -> None:\n    return None\n", "\n"
            ),
        ),
        (
            (
                "SM301",
                "fx/kmd/device.py",
                "knowledge_base/kmd/device.md:14",
                "map-stale",
                ("file:fx/kmd/device.py", "doc:knowledge_base/kmd/device.md#kmd-device-memory"),
            ),
        ),
    ),
    Drift(
        "delete-file-a-doc-names",
        (remove("fx/kmd/native/kmd.c"),),
        (
            (
                "SM301",
                "fx/kmd/native/kmd.c",
                "knowledge_base/kmd/device.md:16",
                "map-stale",
                ("doc:knowledge_base/kmd/device.md#kmd-device-memory",),
            ),
        ),
    ),
    Drift(
        "delete-rpc-from-proto",
        (
            replace_in(
                "contracts/umd.proto",
                "  rpc Translate(TranslateRequest) returns (TranslateReply);\n",
                "",
            ),
        ),
        (
            (
                "SM101",
                "contracts/umd.proto",
                "contracts/runtime_umd.yaml:51",
                "map-stale",
                ("interface:runtime_umd.translate", "file:contracts/umd.proto"),
            ),
            (
                "SM301",
                "contracts/umd.proto:26",
                "knowledge_base/umd/session.md:16",
                "map-stale",
                (
                    "symbol:proto:fx.umd.v1.Translator",
                    "doc:knowledge_base/umd/session.md#umd-session",
                ),
            ),
        ),
    ),
    Drift(
        "doc-names-missing-interface",
        (replace_in("knowledge_base/umd/session.md", "`umd_kmd.alloc`", "`umd_kmd.allocate`"),),
        (
            (
                "SM301",
                "contracts/umd_kmd.yaml",
                "knowledge_base/umd/session.md:14",
                "map-stale",
                ("file:contracts/umd_kmd.yaml", "doc:knowledge_base/umd/session.md#umd-session"),
            ),
        ),
    ),
    Drift(
        "scenario-step-hole",
        (
            replace_in(
                "knowledge_base/scenarios/submit.md",
                "{component: umd.session,",
                "{component: umd.sessions,",
            ),
        ),
        (
            (
                (
                    "SM302",
                    None,
                    "knowledge_base/scenarios/submit.md:8",
                    "map-stale",
                    ("doc:knowledge_base/scenarios/submit.md",),
                )
            ),
        ),
    ),
    Drift(
        "drop-sync-field",
        (
            replace_in(
                "contracts/umd_kmd.yaml",
                "      returns: None\n    sync: sync\n",
                "      returns: None\n",
            ),
        ),
        (("SM401", None, "contracts/umd_kmd.yaml:20", "map-stale", ("interface:umd_kmd.free",)),),
    ),
    Drift(
        "sync-left-as-an-open-question",
        (
            replace_in(
                "contracts/umd_kmd.yaml",
                "      returns: None\n    sync: sync\n",
                "      returns: None\n    open_questions:\n"
                "      - {field: sync, question: Sync or async?, reason: the code is silent}\n",
            ),
        ),
        (("SM402", None, "contracts/umd_kmd.yaml:28", "map-stale", ("interface:umd_kmd.free",)),),
    ),
    Drift(
        "delete-rpc-implementation",
        (
            replace_in(
                "fx/umd/service.py",
                "\n    def Ping(self, request, context):\n        return umd_pb2.PingReply()\n",
                "\n",
            ),
        ),
        (
            (
                "SM501",
                "fx/umd/service.py:6",
                "contracts/umd.proto:28",
                "map-stale",
                (
                    "symbol:fx.umd.service.TranslatorService",
                    "symbol:proto:fx.umd.v1.Translator.Ping",
                ),
            ),
        ),
    ),
    Drift(
        "use-field-the-proto-lacks",
        (replace_in("fx/umd/service.py", "op = request.op", "op = request.op + request.priority"),),
        (
            (
                "SM502",
                "fx/umd/service.py:8",
                "contracts/umd.proto:12",
                "map-stale",
                (
                    "symbol:fx.umd.service.TranslatorService.Translate",
                    "symbol:proto:fx.umd.v1.TranslateRequest",
                ),
            ),
        ),
    ),
    Drift(
        "construct-with-field-the-proto-lacks",
        (replace_in("fx/umd/service.py", "cache_hit=False)", "cache_hit=False, cached=True)"),),
        (
            (
                "SM502",
                "fx/umd/service.py:9",
                "contracts/umd.proto:17",
                "map-stale",
                (
                    "symbol:fx.umd.service.TranslatorService.Translate",
                    "symbol:proto:fx.umd.v1.TranslateReply",
                ),
            ),
        ),
    ),
    Drift(
        "enum-value-changes-on-one-side",
        (replace_in(KMD_H, "#define FX_DTYPE_F16 2", "#define FX_DTYPE_F16 5"),),
        (
            (
                "SM601",
                f"{KMD_H}:5",
                "contracts/umd.proto:8",
                "map-stale",
                (
                    "symbol:c:fx/kmd/include/fx_kmd.h:FX_DTYPE_F16",
                    "symbol:proto:fx.umd.v1.DataType.DATA_TYPE_F16",
                ),
            ),
        ),
    ),
    Drift(
        "drop-memory-field",
        (replace_in("contracts/umd_kmd.yaml", "    memory: Releases the allocation.\n", ""),),
        (("SM401", None, "contracts/umd_kmd.yaml:20", "map-stale", ("interface:umd_kmd.free",)),),
    ),
    Drift(
        "drop-errors-field",
        (replace_in("contracts/umd_kmd.yaml", "    errors: A negative return value.\n", ""),),
        (("SM401", None, "contracts/umd_kmd.yaml:31", "map-stale", ("interface:umd_kmd.ring",)),),
    ),
    Drift(
        "invalid-sync-value",
        (replace_in("contracts/umd_kmd.yaml", "    sync: async\n", "    sync: sometimes\n"),),
        (("SM401", None, "contracts/umd_kmd.yaml:31", "map-stale", ("interface:umd_kmd.ring",)),),
    ),
    Drift(
        "enum-member-renamed-on-one-side",
        (replace_in(KMD_H, "#define FX_DTYPE_F16 2", "#define FX_DTYPE_HALF 2"),),
        (
            (
                "SM601",
                KMD_H,
                "contracts/umd.proto:8",
                "map-stale",
                ("file:fx/kmd/include/fx_kmd.h", "symbol:proto:fx.umd.v1.DataType.DATA_TYPE_F16"),
            ),  # F16 gone from C
            (
                "SM601",
                f"{KMD_H}:5",
                "contracts/umd_kmd.yaml:46",
                "map-stale",
                ("symbol:c:fx/kmd/include/fx_kmd.h:FX_DTYPE_HALF", "file:contracts/umd_kmd.yaml"),
            ),  # HALF only in C
        ),
    ),
    Drift(
        "enum-member-on-one-side-only",
        (replace_in("fx/kmd/dtypes.py", "    I8 = 3\n", "    I8 = 3\n    BF16 = 4\n"),),
        (
            (
                "SM601",
                "fx/kmd/dtypes.py:10",
                "contracts/umd_kmd.yaml:46",
                "map-stale",
                ("symbol:fx.kmd.dtypes.DType.BF16", "file:contracts/umd_kmd.yaml"),
            ),
        ),
    ),
    Drift(
        "proto-enum-value-changes",
        (replace_in("contracts/umd.proto", "DATA_TYPE_I8 = 3;", "DATA_TYPE_I8 = 4;"),),
        (
            (
                "SM601",
                "fx/kmd/dtypes.py:9",
                "contracts/umd.proto:9",
                "code-wrong",
                ("symbol:fx.kmd.dtypes.DType.I8", "symbol:proto:fx.umd.v1.DataType.DATA_TYPE_I8"),
            ),
        ),
    ),
]


def _observed(root: Path) -> set[tuple[str, str | None, str | None, str, tuple[str, ...]]]:
    report = run_check(root)
    return {
        (
            f.rule,
            str(f.code) if f.code else None,
            str(f.map_loc) if f.map_loc else None,
            f.classification.value,
            f.nodes,
        )
        for f in report.findings
    }


def test_clean_stack_has_no_findings(clean_repo: Path) -> None:
    report = run_check(clean_repo)
    assert report.findings == ()
    assert len(report.rules) >= 11


@pytest.mark.parametrize("drift", DRIFTS, ids=[d.id for d in DRIFTS])
def test_seeded_drift_is_found_exactly(
    clean_repo: Path, commit: Callable[[Path, str], None], drift: Drift
) -> None:
    for edit in drift.edits:
        edit(clean_repo)
    commit(clean_repo, drift.id)
    assert _observed(clean_repo) == set(drift.expected)


def test_every_rule_is_seeded() -> None:
    from mapper.check import registry
    from mapper.check.rules import register_all

    register_all()
    seeded = {rule for d in DRIFTS for rule, *_ in d.expected}
    assert seeded == {r.info.id for r in registry.all_rules()}


def test_uncommitted_drift_is_unknown(clean_repo: Path) -> None:
    DRIFTS[0].edits[0](clean_repo)
    DRIFTS[0].edits[1](clean_repo)
    assert {c for *_, c, _nodes in _observed(clean_repo)} == {"unknown"}


def test_outside_git_everything_is_unknown_or_by_policy(clean_copy: Path) -> None:
    replace_in("fx/umd/session.py", "submit(self, blob: bytes", "submit(self, data: bytes")(
        clean_copy
    )
    replace_in(
        "fx/kmd/device.py",
        '"""Device memory."""\n',
        '"""Device memory."""\n\nfrom fx.umd.session import Session\n',
    )(clean_copy)
    observed = {(rule, cls) for rule, _, _, cls, _ in _observed(clean_copy)}
    assert observed == {("SM102", "unknown"), ("SM202", "code-wrong")}
