"""The kernel-mode driver shim and its kernel library: the bottom of the stack."""

from stack.kmd.blob import InstructionBlob, LaunchConfig, TensorParam
from stack.kmd.blob import decode as decode_blob
from stack.kmd.blob import encode as encode_blob
from stack.kmd.device import KmdDevice
from stack.kmd.dtypes import DType
from stack.kmd.errors import *  # noqa: F403 - the error classes are part of the package API
from stack.kmd.errors import __all__ as _errors
from stack.kmd.faults import FaultKind, FaultRecord
from stack.kmd.ioctl import Ioctl, KmdStats
from stack.kmd.kernels.abi import ABIS, KernelAbi, abi_of
from stack.kmd.kernels.ids import KernelId

__all__ = [
    "ABIS",
    "DType",
    "Ioctl",
    "KernelAbi",
    "KmdDevice",
    "KmdStats",
    "abi_of",
    "FaultKind",
    "FaultRecord",
    "InstructionBlob",
    "KernelId",
    "LaunchConfig",
    "TensorParam",
    "decode_blob",
    "encode_blob",
    *_errors,
]
