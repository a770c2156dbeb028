"""The shared-memory side channel for large tensors (seed 000 §6.3).

gRPC carries only the negotiation: the server creates a named POSIX shared-memory region for a
session (:meth:`ShmRegistry.open`) and returns its name and size; the client maps it
(:func:`attach`), writes the tensor and asks the server to commit it (the server checks the
CRC32 the client sent, then copies region → device memory), or asks for an export (device →
region, CRC32 returned for the client to check). Regions belong to their session: destroying or
expiring the session unlinks them.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import zlib
from multiprocessing import resource_tracker, shared_memory

from stack.umd.errors import (
    InvalidRequestError,
    NotFoundError,
    ResourceExhaustedError,
    SharedMemoryError,
)
from stack.umd.session import UmdSession


class ShmRegistry:
    """Regions by (session key, region id); thread-safe. Owns (and unlinks) every region."""

    def __init__(self, max_region_bytes: int = 1 << 30, max_regions: int = 64) -> None:
        self.max_region_bytes = max_region_bytes
        self.max_regions = max_regions
        self._regions: dict[tuple[int, int], shared_memory.SharedMemory] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def open(self, session: UmdSession, nbytes: int) -> tuple[int, str, int]:
        """Create a region of ``nbytes`` for ``session``; returns (region id, name, size)."""
        if not 0 < nbytes <= self.max_region_bytes:
            raise InvalidRequestError(
                f"region size must be 1..{self.max_region_bytes} bytes", field="nbytes"
            )
        with self._lock:
            if len(self._regions) >= self.max_regions:
                raise ResourceExhaustedError(f"{self.max_regions} shared-memory regions open")
            region_id = next(self._ids)
        shm = shared_memory.SharedMemory(create=True, size=nbytes)
        with self._lock:
            first = not any(k[0] == session.key for k in self._regions)
            self._regions[(session.key, region_id)] = shm
        if first:
            session.on_close.append(lambda: self.close_session(session.key))
        return region_id, shm.name, nbytes

    def _get(self, key: int, region_id: int) -> shared_memory.SharedMemory:
        shm = self._regions.get((key, region_id))
        if shm is None:
            raise NotFoundError(f"no shared-memory region {region_id} in this session")
        return shm

    def _span(self, shm: shared_memory.SharedMemory, offset: int, nbytes: int) -> memoryview:
        if nbytes <= 0 or offset + nbytes > shm.size:
            raise InvalidRequestError(
                f"[{offset}, +{nbytes}) is outside the {shm.size}-byte region", field="nbytes"
            )
        return buffer_of(shm)[offset : offset + nbytes]

    def commit(
        self, session: UmdSession, region_id: int, addr: int, nbytes: int, crc: int, offset: int
    ) -> int:
        """Copy region bytes into device memory after checking their CRC32; returns the CRC."""
        span = self._span(self._get(session.key, region_id), offset, nbytes)
        try:
            got = zlib.crc32(span)
            if got != crc:
                raise SharedMemoryError(
                    f"checksum mismatch: region has 0x{got:08x}, client said 0x{crc:08x}"
                )
            session.write(addr, bytes(span))
        finally:
            span.release()
        return got

    def export(
        self, session: UmdSession, region_id: int, addr: int, nbytes: int, offset: int
    ) -> int:
        """Copy device memory into the region; returns the CRC32 of the bytes copied."""
        shm = self._get(session.key, region_id)
        span = self._span(shm, offset, nbytes)
        try:
            data = session.read_bytes(addr, nbytes)
            span[:] = data
        finally:
            span.release()
        return zlib.crc32(data)

    def close(self, key: int, region_id: int) -> None:
        with self._lock:
            shm = self._regions.pop((key, region_id), None)
        if shm is None:
            raise NotFoundError(f"no shared-memory region {region_id} in this session")
        _unlink(shm)

    def close_session(self, key: int) -> None:
        with self._lock:
            victims = [self._regions.pop(k) for k in list(self._regions) if k[0] == key]
        for shm in victims:
            _unlink(shm)

    def close_all(self) -> None:
        with self._lock:
            victims, self._regions = list(self._regions.values()), {}
        for shm in victims:
            _unlink(shm)

    def __len__(self) -> int:
        return len(self._regions)


def _unlink(shm: shared_memory.SharedMemory) -> None:
    shm.close()
    with contextlib.suppress(FileNotFoundError):
        shm.unlink()


def buffer_of(shm: shared_memory.SharedMemory) -> memoryview:
    """The region's bytes (a mapped region always has them)."""
    buf = shm.buf
    if buf is None:
        raise SharedMemoryError(f"region {shm.name} is not mapped")
    return buf


def attach(name: str) -> shared_memory.SharedMemory:
    """Map an existing region (client side) without adopting it: the server unlinks it."""
    shm = shared_memory.SharedMemory(name=name)
    resource_tracker.unregister(shm._name, "shared_memory")  # type: ignore[attr-defined]
    return shm
