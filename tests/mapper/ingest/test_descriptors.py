"""Operator descriptor files read as map symbols: one ``operator`` symbol per file."""

from __future__ import annotations

import json

import pytest

from mapper.errors import IngestError
from mapper.ingest.code import language_for
from mapper.ingest.descriptors import parse_descriptor
from mapper.model import Language, SymbolKind

DESC = {
    "schema": "refstack.operator-descriptor/1",
    "name": "conv_fast",
    "kernel": "CONV2D",
    "version": "2.1.0",
    "summary": "A convolution.",
    "inputs": [
        {"name": "X", "dtypes": ["f32", "f16"], "layouts": ["nchw"], "alignment": 64},
        {"name": "B", "dtypes": ["f32"], "alignment": 16, "optional": True},
    ],
    "outputs": [{"name": "Y", "dtypes": ["f32"], "layouts": ["nchw"], "alignment": 64}],
    "requires": ["tensor_cores", "fp16"],
}


def test_only_descriptor_files_are_json_the_map_reads() -> None:
    assert language_for("pkg/ops/conv_fast.opdesc.json") is Language.JSON
    assert language_for("pkg/ops/pipeline.schema.json") is None
    assert language_for("package.json") is None


def test_a_descriptor_is_one_operator_symbol() -> None:
    text = json.dumps(DESC, indent=2).encode()
    pf = parse_descriptor("pkg/ops/conv_fast.opdesc.json", text)
    (sym,) = pf.symbols
    assert (sym.qualname, sym.kind, sym.language) == (
        "pkg.ops.conv_fast",
        SymbolKind.OPERATOR,
        Language.JSON,
    )
    assert sym.node_id == "symbol:opdesc:pkg.ops.conv_fast"
    assert sym.value == "CONV2D@2.1.0 requires tensor_cores, fp16"
    assert sym.signature is not None
    assert sym.signature.render() == (
        "(X: f32|f16 nchw align 64, B: f32 any align 16 = None) -> Y: f32 nchw align 64"
    )
    assert sym.doc == "A convolution." and sym.location.line == 3
    assert pf.references == () and pf.warnings == ()


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"[1, 2]", "not an object with a name"),
        (b"{not json", "Expecting property name"),
        (b'{"name": "x", "inputs": [3]}', "a tensor is an object with a name"),
    ],
)
def test_a_malformed_descriptor_is_an_ingest_error(data: bytes, why: str) -> None:
    with pytest.raises(IngestError, match=f"not an operator descriptor: {why}"):
        parse_descriptor("pkg/x.opdesc.json", data)
