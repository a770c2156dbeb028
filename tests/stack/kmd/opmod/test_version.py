"""The version rule: another major is refused, another minor loads with a warning, another
patch loads silently — for operator modules here (Executables and contract files reuse it)."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from stack.kmd.opmod import (
    DescriptorError,
    ModuleRegistry,
    SemVer,
    VersionCheck,
    VersionMismatchError,
    check_version,
)
from stack.kmd.opmod.builtin import module as builtin_module
from stack.kmd.opmod.version import warnings_issued

SUPPORTED = SemVer(1, 4, 2)


def test_parse_and_order() -> None:
    assert SemVer.parse("1.10.0") > SemVer.parse("1.9.7")
    assert str(SemVer.parse("0.0.1")) == "0.0.1"
    for bad in ("1.2", "01.2.3", "1.2.3-rc1", "v1.2.3"):
        with pytest.raises(DescriptorError, match=r"is not a version major\.minor\.patch"):
            SemVer.parse(bad)


def test_a_major_mismatch_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(VersionMismatchError) as info:
        check_version("module", "fastgemm", SemVer(2, 0, 0), SUPPORTED)
    err = info.value
    assert (err.kind, err.name, err.found, err.supported) == (
        "module",
        "fastgemm",
        "2.0.0",
        "1.4.2",
    )
    assert err.message == "module fastgemm has version 2.0.0, this stack supports 1.x: refused"


def test_a_minor_mismatch_loads_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="stack.kmd.opmod")
    before = warnings_issued.count
    assert check_version("module", "m", SemVer(1, 3, 0), SUPPORTED) is VersionCheck.MINOR
    assert warnings_issued.count == before + 1
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", "module m has version 1.3.0, this stack supports 1.4.2: loaded "
         "(minor versions differ)")
    ]  # fmt: skip


def test_a_patch_mismatch_loads_silently(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="stack.kmd.opmod")
    before = warnings_issued.count
    assert check_version("module", "m", SemVer(1, 4, 9), SUPPORTED) is VersionCheck.PATCH
    assert check_version("module", "m", SUPPORTED, SUPPORTED) is VersionCheck.EXACT
    assert caplog.records == [] and warnings_issued.count == before


def test_registering_a_module_applies_the_rule_to_its_api_version(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="stack.kmd.opmod")
    base = builtin_module()
    reg = ModuleRegistry()
    with pytest.raises(VersionMismatchError, match=r"module m2 has version 2\.0\.0"):
        reg.register(dataclasses.replace(base, name="m2", api_version=SemVer(2, 0, 0)))
    reg.register(dataclasses.replace(base, name="m11", api_version=SemVer(1, 1, 0)))
    reg.register(dataclasses.replace(base, name="m101", api_version=SemVer(1, 0, 1)))
    assert [m.name for m in reg.modules()] == ["m11", "m101"]
    assert [r.getMessage() for r in caplog.records] == [
        "module m11 has version 1.1.0, this stack supports 1.0.0: loaded (minor versions differ)"
    ]
