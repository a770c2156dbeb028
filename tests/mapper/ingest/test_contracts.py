from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mapper.config import load_config
from mapper.errors import ContractError
from mapper.ingest.contracts import load_contracts, parse_contract
from mapper.model import Location, Param, Signature

MINIREPO = Path(__file__).parents[1] / "fixtures" / "minirepo"
LAYERS = ("compiler", "runtime", "driver")


def test_minirepo_contracts() -> None:
    contracts = load_contracts(MINIREPO, load_config(MINIREPO))
    assert [c.id for c in contracts] == ["compiler_runtime", "runtime_driver"]
    rd = contracts[1]
    assert (rd.path, rd.version, rd.upper, rd.lower) == (
        "contracts/runtime_driver.yaml",
        "1.0.0",
        "runtime",
        "driver",
    )
    alloc, free, rpc = rd.interfaces
    assert alloc.id == "runtime_driver.alloc_pages" and alloc.symbol == "mini_alloc_pages"
    assert alloc.signature == Signature((Param("count", "int"),), "int")
    assert alloc.location == Location("contracts/runtime_driver.yaml", 9)
    assert alloc.sync == "sync" and alloc.errors == "Returns 0 when out of memory."
    assert free.errors is None  # missing semantics load as None; check reports them
    assert rpc.kind == "rpc" and rpc.symbol == "Driver.Alloc"
    (const,) = rd.constants
    assert const.proto == "proto/mini.proto:DType" and const.c == "driver/mini_drv.h:MINI_DTYPE_"
    assert const.python is None and const.location.line == 36


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("contract: x\nupper: compiler\nlower: runtime\n", "differs from file stem", 1),
        ("contract: c\nupper: compiler\nlower: hal\n", "'hal' is not a layer", 1),
        ("contract: c\nupper: compiler\n", "missing or non-string 'lower'", 1),
        (
            "contract: c\nupper: compiler\nlower: runtime\n"
            "interfaces:\n  - id: c.a\n    kind: blob\n",
            "kind 'blob' is not one of",
            5,
        ),
        (
            "contract: c\nupper: compiler\nlower: runtime\ninterfaces:\n  - kind: method\n",
            "interface without an id",
            5,
        ),
        ("contract: c\nupper: [\n", "invalid YAML", 3),
        ("- a\n- b\n", "a contract is a YAML mapping", 1),
    ],
)
def test_schema_violations_carry_path_and_line(text: str, message: str, line: int) -> None:
    with pytest.raises(ContractError, match=message) as info:
        parse_contract(text, "contracts/c.yaml", LAYERS)
    assert info.value.path == "contracts/c.yaml" and info.value.line == line


HEAD = "contract: c\nupper: compiler\nlower: runtime\n"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("schema: 2\n", "contract schema 2.0.0 is not readable (this map reads 1.x)"),
        ("schema: 2.1.0\n", "contract schema 2.1.0 is not readable (this map reads 1.x)"),
        ("schema: one\n", "schema 'one' is not a version"),
        ("version: 1.2\n", "version '1.2' is not major.minor.patch"),
    ],
)
def test_contract_versions_follow_the_rule_major_refused(extra: str, message: str) -> None:
    with pytest.raises(ContractError) as info:
        parse_contract(HEAD + extra, "contracts/c.yaml", ["compiler", "runtime"])
    assert info.value.message == message


def test_contract_schema_minor_warns_and_patch_is_silent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="mapper.contracts")
    layers = ["compiler", "runtime"]
    assert (
        parse_contract(HEAD + "schema: 1.0.7\nversion: 3.1.4\n", "contracts/c.yaml", layers).version
        == "3.1.4"
    )
    assert caplog.records == []
    parse_contract(HEAD + "schema: 1.2.0\n", "contracts/c.yaml", layers)
    assert [r.getMessage() for r in caplog.records] == [
        "contracts/c.yaml: contract schema 1.2.0, this map reads 1.0.0: loaded "
        "(minor versions differ)"
    ]
