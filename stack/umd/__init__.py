"""The user-mode driver: the instruction translator, in process and as a gRPC service.

Imports only ``stack.kmd`` below it, and re-exports what its callers need of it (the runtime
must not import ``stack.kmd``): :class:`DType` and :class:`FaultKind`.
"""

from stack.kmd.dtypes import DType
from stack.kmd.faults import FaultKind
from stack.kmd.kernels.ids import KernelId
from stack.umd.cache import CacheStats, KernelCache
from stack.umd.driver import Umd
from stack.umd.errors import (
    AddressError,
    ClosedError,
    DeviceFaultError,
    DeviceRefusedError,
    InvalidRequestError,
    ResourceExhaustedError,
    SessionNotFoundError,
    ShapeError,
    SharedMemoryError,
    StreamNotFoundError,
    TransportError,
    UmdTimeoutError,
    UnknownOpError,
    UnsupportedDtypeError,
)
from stack.umd.ops import AttrValue, Layout, OpKind, OpRequest, TensorDesc
from stack.umd.pipeline import Translated
from stack.umd.pool_stats import PoolStats
from stack.umd.session import SessionStats, Ticket, UmdSession

__all__ = [
    "AddressError",
    "AttrValue",
    "CacheStats",
    "ClosedError",
    "DType",
    "DeviceFaultError",
    "DeviceRefusedError",
    "FaultKind",
    "InvalidRequestError",
    "KernelCache",
    "KernelId",
    "Layout",
    "OpKind",
    "OpRequest",
    "PoolStats",
    "ResourceExhaustedError",
    "SessionNotFoundError",
    "SessionStats",
    "ShapeError",
    "SharedMemoryError",
    "StreamNotFoundError",
    "TensorDesc",
    "Ticket",
    "Translated",
    "TransportError",
    "Umd",
    "UmdSession",
    "UmdTimeoutError",
    "UnknownOpError",
    "UnsupportedDtypeError",
]
