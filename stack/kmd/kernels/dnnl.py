"""A small ctypes binding of oneDNN's C API (v3.x, ``libdnnl.so.3``): what the NumPy backend's
oneDNN convolutions need, nothing more.

The library comes from the ``onednn-cpu-gomp`` wheel (Linux x86_64; it installs
``libdnnl.so.3`` under the environment's ``lib/`` and runs its threads on the system's GNU
OpenMP, ``libgomp.so.1``). :func:`library` finds it (``$REFSTACK_DNNL_LIBRARY``, else
``sys.prefix/lib``, else the loader's search path) and returns None, with :func:`unavailable`
saying why, where it cannot be loaded: callers then keep their NumPy path.

Every call's ``dnnl_status_t`` is checked once, here (:func:`check`): a non-zero status raises
:class:`DnnlError` naming the call and the status. Handles are plain ``c_void_p``; the objects
this module creates live as long as the process or the Python object owning them (oneDNN
objects are small; primitives are created once per prepared launch).

Threads: oneDNN sizes its parallel regions by OpenMP's ``nthreads`` of the calling thread (an
OpenMP setting per thread): :meth:`Library.set_threads` sets it before a primitive is created
and before it runs; idle OpenMP workers sleep (:data:`WAIT_POLICY`). Scratchpads are always the
caller's (``dnnl_scratchpad_mode_user``): a primitive then runs on any thread, never sharing
the library's per-thread scratchpad.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import threading
from pathlib import Path
from typing import Any

from stack.errors import KmdError

ENV = "REFSTACK_DNNL_LIBRARY"
NAME = "libdnnl.so.3"

# dnnl_types.h / dnnl_common_types.h (v3.x)
CPU = 1  # dnnl_cpu
IN_ORDER = 1  # dnnl_stream_in_order
F32 = 3  # dnnl_f32
FORMAT_ANY = 1  # dnnl_format_tag_any
FORWARD_INFERENCE = 0x60  # dnnl_forward_inference
CONVOLUTION_DIRECT = 0x1
ELTWISE_RELU = 0x20
POOLING_MAX = 0x1FF
SCRATCHPAD_USER = 1  # dnnl_scratchpad_mode_user
QUERY_IMPL_INFO = 8  # dnnl_query_impl_info_str
QUERY_SRC_MD, QUERY_WEIGHTS_MD, QUERY_DST_MD, QUERY_SCRATCHPAD_MD = 129, 131, 133, 136
ARG_SRC, ARG_DST, ARG_WEIGHTS, ARG_BIAS, ARG_SCRATCHPAD = 1, 17, 33, 41, 80
STATUS = {
    1: "out_of_memory", 2: "invalid_arguments", 3: "unimplemented", 4: "last_impl_reached",
    5: "runtime_error", 6: "not_required",
}  # fmt: skip

Handle = ctypes.c_void_p
Dims = ctypes.c_int64 * 12  # dnnl_dims_t


class ExecArg(ctypes.Structure):
    """``dnnl_exec_arg_t``."""

    _fields_ = [("arg", ctypes.c_int), ("memory", Handle)]


class DnnlError(KmdError):
    """A oneDNN call returned a failure status (``call``, ``status`` its name)."""

    def __init__(self, message: str, *, call: str, status: str) -> None:
        super().__init__(message, call=call, status=status)
        self.call = call
        self.status = status


class Library:
    """The loaded library, its CPU engine, an in-order stream per thread; typed entry points."""

    def __init__(self, lib: ctypes.CDLL, gomp: ctypes.CDLL) -> None:
        self.lib = lib
        self.gomp = gomp
        _declare(lib)
        self.engine = Handle()
        check("dnnl_engine_create", lib.dnnl_engine_create(ctypes.byref(self.engine), CPU, 0))
        self._local = threading.local()
        self._omp_set = gomp.omp_set_num_threads

    def stream(self) -> Handle:
        """The calling thread's in-order stream (a stream is not shared between threads: two
        queues' threads may run primitives at once)."""
        stream: Handle | None = getattr(self._local, "stream", None)
        if stream is None:
            stream = Handle()
            status = self.lib.dnnl_stream_create(ctypes.byref(stream), self.engine, IN_ORDER)
            check("dnnl_stream_create", status)
            self._local.stream = stream
        return stream

    def set_threads(self, n: int) -> None:
        """OpenMP's thread count for the calling thread's next parallel regions."""
        self._omp_set(n)


def check(call: str, status: int) -> None:
    """Raise :class:`DnnlError` unless ``status`` is ``dnnl_success``."""
    if status:
        name = STATUS.get(status, f"status {status}")
        raise DnnlError(f"{call} failed: {name}", call=call, status=name)


def _declare(lib: ctypes.CDLL) -> None:
    h, hp, i, c = Handle, ctypes.POINTER(Handle), ctypes.c_int, ctypes.c_float
    signatures: dict[str, tuple[list[Any], Any]] = {
        "dnnl_engine_create": ([hp, i, ctypes.c_size_t], i),
        "dnnl_stream_create": ([hp, h, ctypes.c_uint], i),
        "dnnl_memory_desc_create_with_tag": ([hp, i, Dims, i, i], i),
        "dnnl_memory_desc_create_with_strides": ([hp, i, Dims, i, Dims], i),
        "dnnl_memory_desc_get_size": ([h], ctypes.c_size_t),
        "dnnl_memory_desc_destroy": ([h], i),
        "dnnl_primitive_attr_create": ([hp], i),
        "dnnl_primitive_attr_destroy": ([h], i),
        "dnnl_primitive_attr_set_scratchpad_mode": ([h, i], i),
        "dnnl_primitive_attr_set_post_ops": ([h, h], i),
        "dnnl_post_ops_create": ([hp], i),
        "dnnl_post_ops_destroy": ([h], i),
        "dnnl_post_ops_append_sum": ([h, c, ctypes.c_int32, i], i),
        "dnnl_post_ops_append_eltwise": ([h, i, c, c], i),
        "dnnl_convolution_forward_primitive_desc_create": (
            [hp, h, i, i, h, h, h, h, Dims, Dims, Dims, Dims, h], i),
        "dnnl_pooling_forward_primitive_desc_create": (
            [hp, h, i, i, h, h, Dims, Dims, Dims, Dims, Dims, h], i),
        "dnnl_reorder_primitive_desc_create": ([hp, h, h, h, h, h], i),
        "dnnl_primitive_desc_query": ([h, i, i, h], i),
        "dnnl_primitive_desc_query_md": ([h, i, i], h),
        "dnnl_primitive_desc_destroy": ([h], i),
        "dnnl_primitive_create": ([hp, h], i),
        "dnnl_primitive_destroy": ([h], i),
        "dnnl_primitive_execute": ([h, h, i, h], i),
        "dnnl_memory_create": ([hp, h, h, h], i),
        "dnnl_memory_set_data_handle": ([h, h], i),
        "dnnl_memory_destroy": ([h], i),
        "dnnl_stream_wait": ([h], i),
    }  # fmt: skip
    for name, (args, res) in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, res


def _candidates() -> list[str]:
    given = os.environ.get(ENV, "").strip()
    if given:
        return [given]
    return [str(Path(sys.prefix) / "lib" / NAME), NAME]


#: OpenMP's wait policy unless the environment sets one (read once, when libgomp loads): idle
#: OpenMP workers sleep instead of spinning, so that between convolutions they leave the cores
#: to the KMD's pool threads and to other processes. ResNet-50 at two threads on a loaded
#: 2-vCPU VM (load average 4-5): 818 ms per run with libgomp's default spinning, 104 ms
#: PASSIVE (onnxruntime 61-62 ms in the same runs).
WAIT_POLICY = "PASSIVE"


@functools.cache
def _load() -> tuple[Library | None, str | None]:
    if not sys.platform.startswith("linux"):
        return None, f"oneDNN is used on Linux only (this is {sys.platform})"
    os.environ.setdefault("OMP_WAIT_POLICY", WAIT_POLICY)
    errors = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as exc:  # not here: try the next place
            errors.append(f"{path}: {exc}")
            continue
        return Library(lib, ctypes.CDLL("libgomp.so.1")), None
    return None, "cannot load oneDNN: " + "; ".join(errors)


def library() -> Library | None:
    """The loaded library (None where it cannot be loaded: see :func:`unavailable`)."""
    return _load()[0]


def unavailable() -> str | None:
    """Why oneDNN cannot be used here, or None."""
    return _load()[1]


def dims(values: tuple[int, ...] | list[int]) -> Any:
    """A ``dnnl_dims_t`` holding ``values``."""
    out = Dims()
    for k, v in enumerate(values):
        out[k] = v
    return out
