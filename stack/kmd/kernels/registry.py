"""One registry for kernel backends and the kernels each backend implements.

A backend is a :class:`KernelBackend` (device memory primitives + a kernel table) registered
by name with :func:`register_backend`; kernels register per backend with :func:`register`.
:func:`select_backend` picks one: the explicit name, else ``$REFSTACK_BACKEND``, else CuPy
when ``cupy.cuda.is_available()`` and NumPy otherwise (the null device).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable
from typing import Any

from stack.kmd.errors import BackendUnavailableError, UnknownKernelError
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.lane import HOST, Lane

KernelFn = Callable[[list[Any], list[Any], tuple[int, ...], tuple[float, ...]], None]
#: Given a launch's operands at record time: a closure computing exactly what the kernel would,
#: or None (:mod:`stack.kmd.kernels.prepared_np`).
Preparer = Callable[
    [list[Any], list[Any], tuple[int, ...], tuple[float, ...]], Callable[[], None] | None
]
ENV_BACKEND = "REFSTACK_BACKEND"


class KernelBackend:
    """Device memory primitives of one backend; subclasses fill in the array module."""

    name = "abstract"

    def alloc(self, nbytes: int) -> Any:
        """Zeroed backing storage of ``nbytes`` (1-D uint8 array)."""
        raise NotImplementedError

    def view(
        self, storage: Any, offset: int, nbytes: int, shape: tuple[int, ...], dtype: Any
    ) -> Any:
        """An array view of ``nbytes`` of ``storage`` from ``offset`` (no copy)."""
        raise NotImplementedError

    def upload(self, storage: Any, offset: int, data: memoryview) -> None:
        """Copy host bytes into storage."""
        raise NotImplementedError

    def download(self, storage: Any, offset: int, nbytes: int) -> bytes:
        """Copy storage bytes to the host."""
        raise NotImplementedError

    def to_host(self, storage: Any, offset: int, shape: tuple[int, ...], dtype: Any) -> Any:
        """A NumPy copy of the tensor at ``offset``."""
        raise NotImplementedError

    def host_view(self, storage: Any) -> Any:
        """A host (NumPy) view of host-visible storage; BackendUnavailableError if impossible."""
        raise BackendUnavailableError(f"backend {self.name} has no host mappings")

    def synchronize(self) -> None:
        """Wait until every kernel launched so far has finished (device-wide; tools only: the
        queues await their own lane)."""

    def lane(self) -> Lane:
        """A new execution lane for one queue (:mod:`stack.kmd.kernels.lane`)."""
        return HOST

    def memory_limit(self) -> int:
        """Bytes this device can hand out."""
        raise NotImplementedError


_BACKENDS: dict[str, Callable[[], KernelBackend]] = {}
_AVAILABLE: dict[str, Callable[[], str | None]] = {}
_KERNELS: dict[str, dict[KernelId, KernelFn]] = {}
_PREPARERS: dict[KernelFn, Preparer] = {}  # by the registered kernel function itself
_TILED: set[Preparer] = set()  # preparers that also take launches of several tiles
_KEPT: dict[Preparer, tuple[int, ...]] = {}  # inputs a preparer copies at record time


def register_backend(
    name: str, factory: Callable[[], KernelBackend], unusable: Callable[[], str | None]
) -> None:
    """Register backend ``name``; ``unusable()`` returns why it cannot run here, or None."""
    _BACKENDS[name] = factory
    _AVAILABLE[name] = unusable
    _KERNELS.setdefault(name, {})


def register(backend: str, kernel_id: KernelId) -> Callable[[KernelFn], KernelFn]:
    """Decorator: register ``fn`` as ``kernel_id`` of ``backend``."""

    def deco(fn: KernelFn) -> KernelFn:
        _KERNELS.setdefault(backend, {})[kernel_id] = fn
        return fn

    return deco


def register_preparer(
    fn: KernelFn, preparer: Preparer, *, tiled: bool = False, kept: tuple[int, ...] = ()
) -> None:
    """Let launches of the registered kernel ``fn`` be prepared at record time by ``preparer``
    (keyed by the function: an operator module binding another function is never prepared).
    Untiled launches only, unless ``tiled``: the preparer then also sees launches of several
    tiles (their count bound, :func:`stack.kmd.kernels.parallel.tiles`) and either runs them on
    threads of its own or returns None for them. ``kept``: the inputs (by position) whose
    contents the preparer copies at record time (packed weights): once one of their
    allocations is written after that, the launch calls the kernel instead."""
    _PREPARERS[fn] = preparer
    if tiled:
        _TILED.add(preparer)
    else:
        _TILED.discard(preparer)
    _KEPT[preparer] = kept


def kept_inputs(preparer: Preparer) -> tuple[int, ...]:
    """The inputs whose contents ``preparer`` copies at record time (see register_preparer)."""
    return _KEPT.get(preparer, ())


def prepares_tiled(preparer: Preparer) -> bool:
    """Whether ``preparer`` also prepares launches of several tiles."""
    return preparer in _TILED


def preparer(fn: KernelFn) -> Preparer | None:
    """The preparer registered for kernel function ``fn``, or None."""
    return _PREPARERS.get(fn)


def kernel(backend: str, kernel_id: KernelId) -> KernelFn:
    """The kernel; UnknownKernelError listing what the backend has."""
    table = _KERNELS.get(backend)
    if table is None:
        raise UnknownKernelError(
            f"unknown backend {backend!r}", name=backend, known=known_backends()
        )
    try:
        return table[KernelId(kernel_id)]
    except (KeyError, ValueError):
        known = tuple(k.name for k in table)
        raise UnknownKernelError(
            f"backend {backend!r} has no kernel {kernel_id}", name=str(kernel_id), known=known
        ) from None


def kernels_of(backend: str) -> tuple[KernelId, ...]:
    """Kernel ids a backend implements."""
    return tuple(sorted(_KERNELS.get(backend, {})))


def known_backends() -> tuple[str, ...]:
    """Registered backend names."""
    _load_builtin()
    return tuple(_BACKENDS)


def available_backends() -> tuple[str, ...]:
    """Registered backends that can run on this machine."""
    return tuple(n for n in known_backends() if _AVAILABLE[n]() is None)


def select_backend(name: str | None = None) -> KernelBackend:
    """Instantiate the backend named, or from $REFSTACK_BACKEND, or automatically."""
    _load_builtin()
    chosen = name or os.environ.get(ENV_BACKEND) or None
    if chosen is None or chosen == "auto":
        chosen = "cupy" if _AVAILABLE["cupy"]() is None else "numpy"
    if chosen not in _BACKENDS:
        raise UnknownKernelError(f"unknown backend {chosen!r}", name=chosen, known=tuple(_BACKENDS))
    why = _AVAILABLE[chosen]()
    if why is not None:
        raise BackendUnavailableError(f"backend {chosen!r} cannot run here: {why}", backend=chosen)
    return _BACKENDS[chosen]()


@functools.cache
def cupy_unusable() -> str | None:
    """Why CuPy cannot run kernels here (None when it can). Imports CuPy only if installed;
    asked once per process."""
    if importlib.util.find_spec("cupy") is None:
        return "CuPy is not installed"
    import cupy  # type: ignore[import-not-found,unused-ignore]

    try:
        return None if cupy.cuda.is_available() else "no CUDA device"
    except Exception as exc:  # noqa: BLE001 - any driver failure means "unusable", reported
        return f"CUDA is not usable: {exc}"


def _load_builtin() -> None:
    if "numpy" in _BACKENDS:
        return
    from stack.kmd.kernels import cupy_backend, numpy_backend

    numpy_backend.install()
    cupy_backend.install()
