"""Per-thread scratch buffers and per-shape plans for the NumPy kernels.

Kernels run on whichever queue thread executes them, several at once, so scratch is private to
the calling thread (``threading.local``): a buffer handed out by :func:`buffer` is only ever
used by one kernel call at a time. Buffers are keyed by the caller's key (shape, dtype and
whatever fixes their contents, e.g. the pads of a padded copy whose borders stay zero), so a
buffer keeps what the previous call of the same key left in it; callers rely on that only for
regions they never write (zeroed or filled borders). A thread keeps at most ``BUDGET`` bytes;
past it the thread's buffers are dropped and allocated again. A single buffer larger than
``BUDGET`` is never kept.

:func:`plan` memoises per-shape geometry (index tables, chosen method) shared by every thread:
plans are immutable once built, and building one twice in a race is harmless.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np

#: Bytes of scratch one thread keeps between calls.
BUDGET = 64 << 20
#: Plans kept per process (all kernels together) before the table is cleared.
PLAN_LIMIT = 4096

T = TypeVar("T")
_local = threading.local()
_plans: dict[Hashable, Any] = {}


def _cache() -> dict[Hashable, Any]:
    cache: dict[Hashable, Any] | None = getattr(_local, "cache", None)
    if cache is None:
        cache = _local.cache = {}
        _local.nbytes = 0
    return cache


def get(key: Hashable) -> Any:
    """This thread's object for ``key``, or None."""
    cache: dict[Hashable, Any] | None = getattr(_local, "cache", None)
    return None if cache is None else cache.get(key)


def put(key: Hashable, obj: T, nbytes: int) -> T:
    """Keep ``obj`` (``nbytes`` of buffers) for ``key`` in this thread, within ``BUDGET``."""
    if nbytes > BUDGET:
        return obj
    cache = _cache()
    if _local.nbytes + nbytes > BUDGET:
        cache.clear()
        _local.nbytes = 0
    cache[key] = obj
    _local.nbytes += nbytes
    return obj


def local(key: Hashable, build: Callable[[], T], nbytes: Callable[[T], int]) -> T:
    """This thread's object for ``key``: ``build()`` on first use, kept while this thread's
    total (``nbytes`` of each kept object) stays within ``BUDGET``."""
    hit = get(key)
    if hit is not None:
        return hit
    obj = build()
    return put(key, obj, nbytes(obj))


def buffer(
    key: Hashable, shape: tuple[int, ...], dtype: Any, fill: float | int | None = None
) -> np.ndarray:
    """This thread's array for ``key`` (created with ``fill``, or uninitialised when None).

    The same key must always come with the same shape, dtype and fill.
    """

    def build() -> np.ndarray:
        return np.empty(shape, dtype) if fill is None else np.full(shape, fill, dtype)

    return local(key, build, lambda a: int(a.nbytes))


def plan(key: Hashable, build: Callable[[], T]) -> T:
    """The plan for ``key``, built by ``build()`` on first use."""
    hit = _plans.get(key)
    if hit is None:
        if len(_plans) >= PLAN_LIMIT:
            _plans.clear()
        hit = _plans[key] = build()
    return hit
