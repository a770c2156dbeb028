"""Seeded drifts on the map side: docs naming code (SM3xx), sync declarations (SM4xx), proto
services and messages (SM5xx), contract fields and enums (SM6xx)."""

from __future__ import annotations

from tests.mapper.check.seeded import KMD_H, Drift, remove, replace_in

MAP_DRIFTS = [
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
        "page-declares-a-dependency-the-code-lacks",
        (
            replace_in(
                "knowledge_base/kmd/device.md",
                "upstream: [umd.session]",
                "upstream: [umd.session, runtime.engine]",
            ),
        ),
        (
            (
                "SM303",
                None,
                "knowledge_base/kmd/device.md:8",
                "map-stale",
                ("component:kmd.device", "doc:knowledge_base/kmd/device.md"),
            ),
        ),
    ),
    Drift(
        "code-uses-a-dependency-no-page-declares",
        (
            replace_in(
                "knowledge_base/umd/session.md", "downstream: [kmd.device]", "downstream: []"
            ),
            replace_in("knowledge_base/kmd/device.md", "upstream: [umd.session]", "upstream: []"),
        ),
        (
            (
                "SM304",
                "fx/umd/session.py:8",
                "knowledge_base/umd/session.md:9",
                "code-wrong",
                (
                    "component:kmd.device",
                    "symbol:fx.umd.session.Session.__init__",
                    "doc:knowledge_base/umd/session.md",
                ),
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
