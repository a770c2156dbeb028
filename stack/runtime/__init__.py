"""The runtime: Executable format, loader, stream scheduler, executor, fault recovery.

Imports only ``stack.umd`` below it.
"""

from stack.runtime.errors import (
    ExecutableFormatError,
    ExecutionFaultError,
    ModelClosedError,
    ModelInputError,
    ModelLoadError,
)
from stack.runtime.executable import (
    CONST_ALIGNMENT,
    FORMAT_VERSION,
    Executable,
    OpRecord,
    Segment,
    TensorInfo,
    TensorRole,
)
from stack.runtime.executor import LoadedModel, RunStats
from stack.runtime.opcodes import UMD_DTYPES, UMD_OPS, ExecDType, ExecLayout, ExecOp
from stack.runtime.recovery import RecoveryPolicy
from stack.runtime.runtime import Runtime

__all__ = [
    "CONST_ALIGNMENT",
    "FORMAT_VERSION",
    "UMD_DTYPES",
    "UMD_OPS",
    "ExecDType",
    "ExecLayout",
    "ExecOp",
    "Executable",
    "ExecutableFormatError",
    "ExecutionFaultError",
    "LoadedModel",
    "ModelClosedError",
    "ModelInputError",
    "ModelLoadError",
    "OpRecord",
    "RecoveryPolicy",
    "RunStats",
    "Runtime",
    "Segment",
    "TensorInfo",
    "TensorRole",
]
