from __future__ import annotations

from pathlib import Path

from stack.umd.service import codegen, umd_pb2


def test_committed_code_is_what_the_contract_generates(tmp_path: Path) -> None:
    for fresh in codegen.generate(tmp_path):
        committed = codegen.ROOT / codegen.PACKAGE_DIR / fresh.name
        assert committed.read_text() == fresh.read_text(), (
            f"{fresh.name} is stale: run python -m stack.umd.service.codegen"
        )


def test_enums_agree_with_the_python_vocabulary() -> None:
    from stack.umd import DType, Layout, OpKind

    assert {f"DT_{d.name}": d.value for d in DType} == {
        k: v for k, v in umd_pb2.DataType.items() if k != "DT_UNSPECIFIED"
    }
    assert {f"OP_{o.name}": o.value for o in OpKind} == {
        k: v for k, v in umd_pb2.OpType.items() if k != "OP_UNSPECIFIED"
    }
    assert {f"LAYOUT_{x.name}": x.value for x in Layout} == dict(umd_pb2.Layout.items())
