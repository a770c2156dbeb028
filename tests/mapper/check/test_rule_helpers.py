"""The comparisons the rules rest on: signatures, literals, constant values and names."""

from __future__ import annotations

import pytest

from mapper.check.rules._common import norm_literal, norm_type
from mapper.check.rules.constants import _int, _snake, enum_prefix
from mapper.check.rules.interfaces import compare
from mapper.model import Param, Signature


def _sig(*params: Param, returns: str | None = None, is_async: bool = False) -> Signature:
    return Signature(params, returns, is_async)


def test_identical_signatures_have_no_differences() -> None:
    sig = _sig(Param("ctx", "int"), Param("align", "int", "256"), returns="int")
    assert compare(sig, sig) == []


@pytest.mark.parametrize(
    ("code", "needle"),
    [
        (_sig(Param("context", "int"), Param("align", "int", "256"), returns="int"), "'context'"),
        (_sig(Param("ctx", "str"), Param("align", "int", "256"), returns="int"), "type str"),
        (_sig(Param("ctx", "int"), Param("align", "int", "64"), returns="int"), "default 64"),
        (_sig(Param("ctx", "int"), Param("align", "int"), returns="int"), "default none"),
        (_sig(Param("ctx", "int"), Param("align", "int", "256"), returns="None"), "returns None"),
        (_sig(Param("ctx", "int"), returns="int"), "'align' is missing"),
        (
            _sig(Param("ctx", "int"), Param("align", "int", "256"), Param("x"), returns="int"),
            "extra parameter 'x'",
        ),
        (
            _sig(Param("ctx", "int"), Param("align", "int", "256"), returns="int", is_async=True),
            "async def in the code",
        ),
    ],
)
def test_each_drift_is_named(code: Signature, needle: str) -> None:
    contract = _sig(Param("ctx", "int"), Param("align", "int", "256"), returns="int")
    diffs = compare(contract, code)
    assert len(diffs) == 1 and needle in diffs[0]


def test_untyped_contract_params_do_not_check_types() -> None:
    assert compare(_sig(Param("x")), _sig(Param("x", "int"))) == []


def test_rpc_types_compare_without_package_and_keep_streaming() -> None:
    contract = _sig(Param("request", "TranslateOpRequest"), returns="TranslateOpResponse")
    proto = _sig(
        Param("request", "refstack.umd.v1.TranslateOpRequest"),
        returns="refstack.umd.v1.TranslateOpResponse",
    )
    assert compare(contract, proto, rpc=True) == []
    streamed = _sig(
        Param("request", "stream refstack.umd.v1.TranslateOpRequest"),
        returns="refstack.umd.v1.TranslateOpResponse",
    )
    assert compare(contract, streamed, rpc=True) != []


def test_literals_and_types_normalise() -> None:
    assert norm_literal("1e-5") == norm_literal("1e-05") == norm_literal("0.00001")
    assert norm_literal("'a'") == norm_literal('"a"')
    assert norm_literal("256") == norm_literal("256.0")
    assert norm_literal("True") != norm_literal("False")
    assert norm_type("tuple[int, ...]") == norm_type("tuple[int,...]")
    assert norm_type("'TensorDesc' | None") == norm_type("TensorDesc | None")


def test_c_values_and_proto_prefixes() -> None:
    assert _int("0x10u") == 16 and _int("(3)") == 3 and _int("7UL") == 7
    assert _int("_IOWR('F', 1, struct x)") is None
    assert _snake("DataType") == "DATA_TYPE_" and _snake("OpType") == "OP_TYPE_"


def test_proto_enum_prefixes() -> None:
    assert enum_prefix("DataType", ["DATA_TYPE_UNSPECIFIED", "DATA_TYPE_F32"]) == "DATA_TYPE_"
    assert enum_prefix("DataType", ["DT_UNSPECIFIED", "DT_F32", "DT_F16"]) == "DT_"
    assert enum_prefix("OpType", ["OP_UNSPECIFIED", "OP_MATMUL_INTEGER"]) == "OP_"
    assert enum_prefix("Layout", ["ANY", "NCHW"]) == ""
