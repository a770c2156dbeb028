"""The built-in operator module: one descriptor per KMD kernel (``*.opdesc.json`` here), each
implemented by the kernel registered under its kernel id for the device's backend. Registered
through the ``refstack.operator_modules`` entry point like any other module."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from stack.kmd.kernels import registry
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.registry import KernelFn
from stack.kmd.opmod.descriptor import Descriptor, descriptor_files, load_descriptor
from stack.kmd.opmod.module import MODULE_API, OperatorModule
from stack.kmd.opmod.version import SemVer

NAME = "builtin"
VERSION = SemVer(1, 0, 0)


def folder() -> Path:
    """Where the built-in descriptor files are."""
    return Path(str(resources.files(__name__)))


def _resolve(d: Descriptor, backend: str) -> KernelFn:
    registry.known_backends()  # the built-in backends register their kernels on first use
    return registry.kernel(backend, KernelId[d.kernel])


def module() -> OperatorModule:
    """The built-in module (entry point ``builtin``)."""
    descs = tuple(load_descriptor(p, module=NAME) for p in descriptor_files(folder()))
    return OperatorModule(NAME, VERSION, MODULE_API, descs, _resolve)
