"""Threading of the BLAS under NumPy (the null device's matrix engine), set once per process.

NumPy's OpenBLAS spreads each GEMM over every core by default. On a small shared machine that
loses badly for the mid-size GEMMs of a CNN (thread wake-ups and spinning cost more than the
split gains: 3-4x slower measured on 2 cores under load), and the KMD already runs one worker
per queue, so parallelism comes from queues instead. ``configure`` therefore sets OpenBLAS to
``$REFSTACK_BLAS_THREADS`` threads (default 1; ``0`` leaves the library's own setting). It only
changes speed, never results; when NumPy is not built on OpenBLAS it does nothing.
"""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

import numpy as np

ENV = "REFSTACK_BLAS_THREADS"
DEFAULT = 1
_SUFFIXES = ("scipy_openblas_{}_num_threads64_", "scipy_openblas_{}_num_threads",
             "openblas_{}_num_threads64_", "openblas_{}_num_threads")  # fmt: skip


@functools.cache
def _openblas() -> tuple[ctypes.CDLL, str] | None:
    root = Path(np.__file__).resolve().parent
    for lib_dir in (root.parent / "numpy.libs", root / ".libs"):
        for path in sorted(lib_dir.glob("*openblas*.so*")):
            try:
                lib = ctypes.CDLL(str(path))
            except OSError:  # not loadable here: try the next candidate
                continue
            for pattern in _SUFFIXES:
                if hasattr(lib, pattern.format("set")) and hasattr(lib, pattern.format("get")):
                    return lib, pattern
    return None


def threads() -> int | None:
    """OpenBLAS's current thread count (None when NumPy does not use OpenBLAS)."""
    found = _openblas()
    if found is None:
        return None
    lib, pattern = found
    return int(getattr(lib, pattern.format("get"))())


def set_threads(n: int) -> bool:
    """Set OpenBLAS's thread count for the whole process; False when there is no OpenBLAS."""
    found = _openblas()
    if found is None:
        return False
    lib, pattern = found
    getattr(lib, pattern.format("set"))(ctypes.c_int(n))
    return True


def core() -> str | None:
    """The CPU core OpenBLAS dispatches its kernels for (``Haswell``: AVX2, ``SkylakeX``:
    AVX-512, ...): detected at load, or forced by ``$OPENBLAS_CORETYPE``. It bounds what the
    null device's GEMMs can reach against an engine with its own AVX-512 kernels, so speed
    reports carry it. None when NumPy does not use OpenBLAS."""
    found = _openblas()
    if found is None:
        return None
    lib, pattern = found
    prefix = pattern.split("{}")[0]  # "scipy_openblas_" or "openblas_"
    name = f"{prefix}get_corename{'64_' if pattern.endswith('64_') else ''}"
    getter = getattr(lib, name, None)
    if getter is None:
        return None
    getter.restype = ctypes.c_char_p
    raw = getter()
    return raw.decode().strip() if raw else None


@functools.cache
def configure() -> int | None:
    """Apply ``$REFSTACK_BLAS_THREADS`` (default 1) once; the resulting thread count."""
    raw = os.environ.get(ENV, str(DEFAULT)).strip()
    wanted = int(raw) if raw.isdigit() else DEFAULT
    if wanted > 0:
        set_threads(wanted)
    return threads()
