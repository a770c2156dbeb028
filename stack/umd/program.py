"""Encoded programs: what the kernel cache stores, and the address patching of a cache hit.

A :class:`Program` is the output of stage 5 for one request *shape*: the encoded blobs of the
op (and of any layout conversions around it) with the tensor addresses left as patch sites.
A request whose key matches reuses it: :meth:`Program.patch` copies each blob, writes the
request's addresses at the recorded offsets and recomputes the CRC32 trailer — no shape
inference, launch configuration or encoding runs again.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from stack.kmd.blob import HEADER, PARAM, TRAILER, InstructionBlob, encode
from stack.kmd.kernels.ids import KernelId

_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")


@dataclass(frozen=True, slots=True)
class BlobTemplate:
    """One encoded blob and where its tensor addresses go.

    ``patches`` holds ``(byte offset, operand index)`` pairs; operand indices count the request's
    inputs, then its outputs, then the program's scratch buffers.
    """

    kernel_id: KernelId
    data: bytes
    patches: tuple[tuple[int, int], ...]

    def patch(self, addrs: tuple[int, ...]) -> bytes:
        buf = bytearray(self.data)
        pack = _U64.pack_into
        for off, operand in self.patches:
            pack(buf, off, addrs[operand])
        end = len(buf) - TRAILER.size
        _U32.pack_into(buf, end, zlib.crc32(memoryview(buf)[:end]))
        return bytes(buf)


@dataclass(frozen=True, slots=True)
class Program:
    """The cached translation of one request shape: blobs in order, scratch sizes, main kernel."""

    blobs: tuple[BlobTemplate, ...]
    scratch: tuple[int, ...]
    primary: int
    nbytes: tuple[int, ...] = ()  # byte size of each request operand (inputs, then outputs)

    @property
    def kernel_id(self) -> KernelId:
        return self.blobs[self.primary].kernel_id

    def patch(self, addrs: tuple[int, ...]) -> tuple[bytes, ...]:
        if len(self.blobs) == 1:
            return (self.blobs[0].patch(addrs),)
        return tuple([b.patch(addrs) for b in self.blobs])


def template_from(blob: InstructionBlob, operands: tuple[int, ...]) -> BlobTemplate:
    """Encode ``blob`` and record that its param ``i`` takes the address of ``operands[i]``."""
    if len(operands) != len(blob.params):
        raise ValueError(f"{len(operands)} operand refs for {len(blob.params)} params")
    data = encode(blob)
    patches = tuple((HEADER.size + i * PARAM.size, ref) for i, ref in enumerate(operands))
    return BlobTemplate(blob.kernel_id, data, patches)
