from __future__ import annotations

import pytest

from stack.errors import (
    AdapterError,
    CompilerError,
    KmdError,
    RuntimeLayerError,
    StackError,
    UmdError,
)


@pytest.mark.parametrize(
    ("cls", "layer"),
    [
        (AdapterError, "adapter"),
        (CompilerError, "compiler"),
        (RuntimeLayerError, "runtime"),
        (UmdError, "umd"),
        (KmdError, "kmd"),
    ],
)
def test_one_subclass_per_layer(cls: type[StackError], layer: str) -> None:
    err = cls("boom", op="Conv", node="conv_1")
    assert isinstance(err, StackError)
    assert err.layer == layer
    assert err.to_dict() == {
        "error": cls.__name__,
        "layer": layer,
        "message": "boom",
        "op": "Conv",
        "node": "conv_1",
    }
    assert str(err) == f"[{layer}] boom (op=Conv, node=conv_1)"


def test_location_and_details() -> None:
    err = CompilerError("bad shape", path="model.onnx", line=3, expected=[1, 2])
    assert str(err) == "[compiler] bad shape (model.onnx:3)"
    assert err.to_dict()["expected"] == [1, 2]
