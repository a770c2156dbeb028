"""DType: ABI values, NumPy mapping and the typed refusal."""

from __future__ import annotations

import numpy as np
import pytest

from stack.errors import KmdError
from stack.kmd.dtypes import DType
from stack.kmd.errors import UnsupportedDTypeError


def test_abi_values_are_fixed() -> None:
    assert {d.name: int(d) for d in DType} == {
        "F32": 1, "F16": 2, "I8": 3, "U8": 4, "I32": 5, "I64": 6, "BOOL": 7, "F64": 8,
    }  # fmt: skip


@pytest.mark.parametrize("dtype", list(DType))
def test_numpy_round_trip(dtype: DType) -> None:
    assert DType.from_numpy(dtype.numpy) is dtype
    assert dtype.itemsize == np.zeros(1, dtype.numpy).itemsize


def test_from_numpy_accepts_type_and_string() -> None:
    assert DType.from_numpy(np.float32) is DType.F32
    assert DType.from_numpy("int8") is DType.I8


def test_unsupported_dtype_is_typed_and_lists_supported() -> None:
    with pytest.raises(UnsupportedDTypeError) as info:
        DType.from_numpy(np.complex64)
    assert isinstance(info.value, KmdError)
    assert "float32" in str(info.value)
    assert info.value.to_dict()["dtype"] == "complex64"
