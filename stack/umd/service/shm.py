"""The shared-memory side channel for large tensors (seed 000 §6.3).

gRPC carries only the negotiation: the server creates a named POSIX shared-memory region for a
session (:meth:`ShmRegistry.open`) and returns its name and size; the client maps it
(:func:`attach`), writes the tensor and asks the server to commit it (the server checks the
CRC32 the client sent, then copies region → device memory), or asks for an export (device →
region, CRC32 returned for the client to check). Regions belong to their session: destroying or
expiring the session unlinks them.

Regions are named ``refstack_umd_<server pid>_<token>_<n>``: when a server dies with its
resource tracker (kill -9 of the process group), its regions stay in ``/dev/shm``; the next
server reclaims them (:func:`reclaim_orphans`: every region of this naming whose pid is no
longer alive is unlinked).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import secrets
import threading
import zlib
from multiprocessing import resource_tracker, shared_memory
from pathlib import Path

from stack.umd.errors import (
    InvalidRequestError,
    NotFoundError,
    ResourceExhaustedError,
    SharedMemoryError,
)
from stack.umd.session import UmdSession

log = logging.getLogger(__name__)
PREFIX = "refstack_umd_"
SHM_DIR = Path("/dev/shm")
_names = itertools.count(1)


def region_name(token: str) -> str:
    """A fresh region name carrying this process's pid (see the module docstring)."""
    return f"{PREFIX}{os.getpid()}_{token}_{next(_names)}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # somebody else's live process
        return True
    return True


def reclaim_orphans(directory: Path = SHM_DIR) -> list[str]:
    """Unlink the regions of servers that are no longer running; returns their names."""
    if not directory.is_dir():
        return []
    reclaimed = []
    for path in directory.glob(f"{PREFIX}*"):
        pid = path.name[len(PREFIX) :].split("_", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            reclaimed.append(path.name)
    if reclaimed:
        log.warning("reclaimed %d shared-memory regions of a dead server", len(reclaimed))
    return reclaimed


class ShmRegistry:
    """Regions by (session key, region id); thread-safe. Owns (and unlinks) every region."""

    def __init__(self, max_region_bytes: int = 1 << 30, max_regions: int = 64) -> None:
        self.max_region_bytes = max_region_bytes
        self.max_regions = max_regions
        self._regions: dict[tuple[int, int], shared_memory.SharedMemory] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._token = secrets.token_hex(3)
        self.commits = self.exports = 0
        self.reclaimed = reclaim_orphans()

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
        try:
            shm = shared_memory.SharedMemory(region_name(self._token), create=True, size=nbytes)
        except OSError as exc:  # /dev/shm full or limited
            raise ResourceExhaustedError(f"cannot create a {nbytes}-byte region: {exc}") from None
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
        self.commits += 1
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
        self.exports += 1
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
