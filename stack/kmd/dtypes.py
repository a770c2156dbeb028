"""Element types the KMD understands; the integer values are ABI.

The same values appear in ``contracts/umd.proto`` (``DataType``) and in the C header
``stack/kmd/include/refstack_kmd.h`` (``REFSTACK_DTYPE_*``); a test keeps them in agreement.
"""

from __future__ import annotations

import enum

import numpy as np

from stack.kmd.errors import UnsupportedDTypeError


class DType(enum.IntEnum):
    """A tensor element type. Values are part of the blob ABI: never renumber."""

    F32 = 1
    F16 = 2
    I8 = 3
    U8 = 4
    I32 = 5
    I64 = 6
    BOOL = 7
    F64 = 8

    @property
    def numpy(self) -> np.dtype:
        """The matching NumPy dtype (also what the CuPy backend uses)."""
        return _TO_NUMPY[self]

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return _TO_NUMPY[self].itemsize

    @classmethod
    def from_numpy(cls, dtype: np.dtype | type | str) -> DType:
        """The DType for a NumPy dtype; UnsupportedDTypeError when there is none."""
        key = np.dtype(dtype)
        try:
            return _FROM_NUMPY[key]
        except KeyError:
            known = ", ".join(str(d) for d in _FROM_NUMPY)
            raise UnsupportedDTypeError(
                f"unsupported dtype {key}; supported: {known}", dtype=str(key)
            ) from None


_TO_NUMPY: dict[DType, np.dtype] = {
    DType.F32: np.dtype(np.float32),
    DType.F16: np.dtype(np.float16),
    DType.I8: np.dtype(np.int8),
    DType.U8: np.dtype(np.uint8),
    DType.I32: np.dtype(np.int32),
    DType.I64: np.dtype(np.int64),
    DType.BOOL: np.dtype(np.bool_),
    DType.F64: np.dtype(np.float64),
}
_FROM_NUMPY: dict[np.dtype, DType] = {v: k for k, v in _TO_NUMPY.items()}
