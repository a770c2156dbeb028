"""The op record's layout field (format 2.1): round trip, and 2.0 files without it."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import pytest

from stack.runtime import ExecLayout, Executable, ExecutableFormatError
from stack.runtime.binary import assemble
from stack.runtime.executable import FORMAT_VERSION
from stack.runtime.records_json import records_to_json


def _nhwc(exe: Executable) -> Executable:
    ops = tuple(dataclasses.replace(op, layout=ExecLayout.NHWC) if i == 0 else op
                for i, op in enumerate(exe.ops))  # fmt: skip
    return dataclasses.replace(exe, ops=ops)


def test_the_layout_round_trips_as_a_seventh_item(conv_model: Any) -> None:
    exe = _nhwc(conv_model[0])
    code, _, _ = records_to_json(exe)
    assert code["ops"][0][6] == 1 and all(len(row) == 6 for row in code["ops"][1:])
    back = Executable.from_bytes(exe.to_bytes())
    assert back == exe and back.ops[0].layout is ExecLayout.NHWC
    assert FORMAT_VERSION == (2, 1, 0)


def test_a_2_0_file_without_the_field_loads_as_nchw(
    conv_model: Any, caplog: pytest.LogCaptureFixture
) -> None:
    exe = conv_model[0]
    code, plan, symbols = records_to_json(exe)
    assert all(len(row) == 6 for row in code["ops"])
    with caplog.at_level(logging.WARNING):
        back = Executable.from_bytes(assemble((2, 0, 0), code, plan, symbols, exe.consts))
    assert back.version == (2, 0, 0)
    assert {op.layout for op in back.ops} == {ExecLayout.NCHW}
    assert back.ops == exe.ops


def test_an_unknown_layout_code_is_refused(conv_model: Any) -> None:
    exe = conv_model[0]
    code, plan, symbols = records_to_json(exe)
    code["ops"][0].append(7)
    with pytest.raises(ExecutableFormatError) as info:
        Executable.from_bytes(assemble(FORMAT_VERSION, code, plan, symbols, exe.consts))
    assert info.value.details.get("field") == "ops[0].layout"
