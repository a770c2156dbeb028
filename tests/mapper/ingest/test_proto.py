from __future__ import annotations

from pathlib import Path

from mapper.ingest.code import parse_file
from mapper.ingest.proto import parse_proto
from mapper.model import Language, Param, Signature, SymbolKind

MINIREPO = Path(__file__).parents[1] / "fixtures" / "minirepo"


def test_services_rpcs_messages_fields_enums() -> None:
    parsed = parse_proto(MINIREPO, "proto/mini.proto")
    syms = {s.qualname: s for s in parsed.symbols}
    assert {q: s.kind for q, s in syms.items()} == {
        "mini.v1.AllocRequest": SymbolKind.MESSAGE,
        "mini.v1.AllocRequest.size": SymbolKind.FIELD,
        "mini.v1.AllocRequest.dtype": SymbolKind.FIELD,
        "mini.v1.AllocResponse": SymbolKind.MESSAGE,
        "mini.v1.AllocResponse.addr": SymbolKind.FIELD,
        "mini.v1.AllocResponse.pages": SymbolKind.FIELD,
        "mini.v1.AllocResponse.Detail": SymbolKind.MESSAGE,
        "mini.v1.AllocResponse.Detail.note": SymbolKind.FIELD,
        "mini.v1.DType": SymbolKind.ENUM,
        "mini.v1.DType.DTYPE_UNSPECIFIED": SymbolKind.ENUMERATOR,
        "mini.v1.DType.DTYPE_F32": SymbolKind.ENUMERATOR,
        "mini.v1.Driver": SymbolKind.SERVICE,
        "mini.v1.Driver.Alloc": SymbolKind.RPC,
        "mini.v1.Driver.Watch": SymbolKind.RPC,
    }
    alloc = syms["mini.v1.Driver.Alloc"]
    assert alloc.location.line == 7 and alloc.language is Language.PROTO
    assert alloc.node_id == "symbol:proto:mini.v1.Driver.Alloc"
    assert alloc.signature == Signature(
        (Param("request", "mini.v1.AllocRequest"),), "mini.v1.AllocResponse"
    )
    watch = syms["mini.v1.Driver.Watch"].signature
    assert watch is not None and watch.returns == "stream mini.v1.AllocResponse"
    assert syms["mini.v1.AllocResponse.pages"].signature == Signature((), "repeated uint32")
    assert syms["mini.v1.DType.DTYPE_F32"].value == "1"
    assert syms["mini.v1.AllocRequest.dtype"].location.line == 13
    assert parse_file(MINIREPO, "proto/mini.proto").symbols == parsed.symbols


def test_bad_proto_gives_warning_not_exception(tmp_path: Path) -> None:
    (tmp_path / "bad.proto").write_text('syntax = "proto3";\nmessage X { int32 = ; }\n')
    parsed = parse_proto(tmp_path, "bad.proto")
    assert parsed.symbols == ()
    assert len(parsed.warnings) == 1 and parsed.warnings[0].startswith("bad.proto: ")


def test_imports_of_well_known_types(tmp_path: Path) -> None:
    (tmp_path / "t.proto").write_text(
        'syntax = "proto3";\nimport "google/protobuf/empty.proto";\n'
        "service S { rpc Ping(google.protobuf.Empty) returns (google.protobuf.Empty); }\n"
    )
    parsed = parse_proto(tmp_path, "t.proto")
    assert [r.target for r in parsed.references] == ["google/protobuf/empty.proto"]
    assert [s.qualname for s in parsed.symbols] == ["S", "S.Ping"]
