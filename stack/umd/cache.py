"""The kernel cache: translated ops keyed by what determines their instruction blobs.

The key is ``(op, operand signatures, attrs, target)`` where an operand signature is
``(shape, dtype, layout)`` — everything but the addresses. An entry holds the encoded program
(blobs with the addresses left to patch), so a hit skips shape inference, launch configuration
and template instantiation (stages 4–5) and only patches addresses and the checksum.

One cache is shared by every session of a :class:`~stack.umd.driver.Umd` (entries carry no
session data); each session sees it through a :class:`CacheView` that keeps its own counters.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class CacheStats:
    """Counters of a cache or of one session's view of it."""

    hits: int
    misses: int
    evictions: int
    size: int
    capacity: int

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


class KernelCache(Generic[V]):
    """Bounded LRU map with hit/miss/eviction counters; thread-safe.

    ``get`` counts a hit or a miss and refreshes the entry's recency; ``put`` inserts and evicts
    the least recently used entry beyond ``capacity``. ``capacity == 0`` disables caching.
    """

    def __init__(self, capacity: int = 4096) -> None:
        if capacity < 0:
            raise ValueError("capacity must be >= 0")
        self.capacity = capacity
        self._data: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            value = self._data.get(key)
            if value is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: Hashable, value: V) -> None:
        if self.capacity == 0:
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)
                self.evictions += 1

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def stats(self) -> CacheStats:
        return CacheStats(self.hits, self.misses, self.evictions, len(self._data), self.capacity)


class CacheView(Generic[V]):
    """One session's window on the shared cache: same entries, its own hit/miss counters."""

    def __init__(self, cache: KernelCache[V]) -> None:
        self.cache = cache
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> V | None:
        value = self.cache.get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put(self, key: Hashable, value: V) -> None:
        self.cache.put(key, value)

    def stats(self) -> CacheStats:
        return CacheStats(self.hits, self.misses, 0, len(self.cache), self.cache.capacity)
