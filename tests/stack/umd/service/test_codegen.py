from __future__ import annotations

import re
from pathlib import Path

from stack.umd.service import codegen, umd_pb2

_STAMPS = (
    (re.compile(r"Protobuf Python Version: [\d.]+"), "Protobuf Python Version: *"),
    (re.compile(r"GRPC_GENERATED_VERSION = '[\d.]+'"), "GRPC_GENERATED_VERSION = '*'"),
    (re.compile(r"(Domain\.PUBLIC,\n)\s*\d+,\n\s*\d+,\n\s*\d+,"), r"\1*"),
)


def _normal(text: str) -> str:
    """The generated text without the generator's version stamps (they follow the installed
    grpcio-tools and protobuf; the generated code does not)."""
    for pattern, repl in _STAMPS:
        text = pattern.sub(repl, text)
    return text


def test_committed_code_is_what_the_contract_generates(tmp_path: Path) -> None:
    for fresh in codegen.generate(tmp_path):
        committed = codegen.ROOT / codegen.PACKAGE_DIR / fresh.name
        assert _normal(committed.read_text()) == _normal(fresh.read_text()), (
            f"{fresh.name} is stale: run python -m stack.umd.service.codegen"
        )


def test_the_stamp_normalisation_still_sees_a_changed_contract() -> None:
    committed = (codegen.ROOT / codegen.PACKAGE_DIR / "umd_pb2.py").read_text()
    normal = _normal(committed)
    assert "Version: *" in normal and "Domain.PUBLIC,\n*" in normal
    assert normal != _normal(committed.replace("refstack.umd.v1", "refstack.umd.v2"))


def test_enums_agree_with_the_python_vocabulary() -> None:
    from stack.umd import DType, Layout, OpKind

    assert {f"DT_{d.name}": d.value for d in DType} == {
        k: v for k, v in umd_pb2.DataType.items() if k != "DT_UNSPECIFIED"
    }
    assert {f"OP_{o.name}": o.value for o in OpKind} == {
        k: v for k, v in umd_pb2.OpType.items() if k != "OP_UNSPECIFIED"
    }
    assert {f"LAYOUT_{x.name}": x.value for x in Layout} == dict(umd_pb2.Layout.items())
