from __future__ import annotations

import pytest

from stack.umd.cache import CacheView, KernelCache


def test_hits_misses_and_lru_eviction() -> None:
    c: KernelCache[str] = KernelCache(capacity=2)
    assert c.get("a") is None
    c.put("a", "A")
    c.put("b", "B")
    assert c.get("a") == "A"  # a is now most recent
    c.put("c", "C")  # evicts b, the least recently used
    assert "b" not in c and "a" in c and "c" in c
    s = c.stats()
    assert (s.hits, s.misses, s.evictions, s.size, s.capacity) == (1, 1, 1, 2, 2)
    assert s.hit_rate == 0.5


def test_capacity_zero_disables_caching() -> None:
    c: KernelCache[int] = KernelCache(capacity=0)
    c.put("k", 1)
    assert c.get("k") is None and len(c) == 0
    with pytest.raises(ValueError):
        KernelCache(capacity=-1)


def test_views_share_entries_but_count_apart() -> None:
    c: KernelCache[int] = KernelCache(8)
    v1, v2 = CacheView(c), CacheView(c)
    assert v1.get("k") is None
    v1.put("k", 7)
    assert v2.get("k") == 7
    assert (v1.hits, v1.misses, v2.hits, v2.misses) == (0, 1, 1, 0)
    assert (c.hits, c.misses) == (1, 1)
