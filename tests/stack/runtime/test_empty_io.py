"""Model inputs and outputs of zero elements at the runtime: each owns IO bytes of its own, so
the inputs are copied in and the outputs read out at the right addresses; an Executable whose
IO tensors share bytes (as the compiler once emitted for a zero-element input, which then failed
copying the inputs in with an untyped ValueError) is refused at validation, naming the tensor."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from stack.runtime import ExecOp, Executable, ExecutableFormatError, Runtime


def _model(builder: Any) -> Executable:
    """e (0, 3) -> RELU -> y (0, 3) and x (2, 3) -> RELU -> z (2, 3), the empty ones first."""
    b = builder()
    e, x = b.input("e", (0, 3)), b.input("x", (2, 3))
    y, z = b.output("y", (0, 3)), b.output("z", (2, 3))
    b.op(ExecOp.RELU, [e], [y])
    b.op(ExecOp.RELU, [x], [z])
    exe: Executable = b.build()
    return exe


def test_empty_inputs_and_outputs_run(builder: Any) -> None:
    exe = _model(builder)
    x = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], np.float32)
    with Runtime("numpy", streams=1) as rt, rt.load(exe.to_bytes()) as model:
        for _ in range(2):  # the second run takes the recorded fast path
            out = model.run({"e": np.zeros((0, 3), np.float32), "x": x})
            assert (out["y"].shape, out["y"].dtype) == ((0, 3), np.float32)
            np.testing.assert_array_equal(out["z"], np.maximum(x, 0))


def test_io_tensors_sharing_bytes_are_refused(builder: Any) -> None:
    exe = _model(builder)
    tensors = list(exe.tensors)
    e, x = exe.tensor("e"), exe.tensor("x")
    tensors[e.id] = dataclasses.replace(e, size=0)  # reserves nothing
    with pytest.raises(ExecutableFormatError) as info:
        dataclasses.replace(exe, tensors=tuple(tensors)).validate()
    assert info.value.field == f"tensors[{e.id}].size"
    tensors[e.id] = e
    tensors[x.id] = dataclasses.replace(x, offset=e.offset)  # the address of the empty input
    with pytest.raises(ExecutableFormatError) as info:
        dataclasses.replace(exe, tensors=tuple(tensors)).to_bytes()
    assert info.value.field == f"tensors[{x.id}].offset"
    assert "overlaps IO tensor 'e'" in info.value.message
