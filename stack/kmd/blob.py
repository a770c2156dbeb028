"""The instruction-blob format (seed 000 §4.3), defined by the layer that executes it.

Little-endian. A blob is one kernel launch::

    header   struct "<IHHIII3I3IIII" (56 bytes; 15 fields as listed below)
             magic u32 = 0x5A5A5A5A, version u16 = 1, flags u16, kernel_id u32,
             instruction_size u32 (total blob bytes, trailer included), param_count u32,
             launch_config: grid[3] u32, block[3] u32, shared_mem u32, then n_ints u32, n_floats u32
    params   param_count x tensor descriptor "<QQBBH8q" (84 bytes):
             addr u64 (device VA), nbytes u64, dtype u8, ndim u8, reserved u16 (0),
             dims 8 x i64 (unused dims 0)
    ints     n_ints x i64    kernel immediates (strides, pads, axis, flags, perm ...)
    floats   n_floats x f64  kernel immediates (epsilon, alpha, beta ...)
    trailer  crc32 u32 of every byte before it

Which params, ints and floats a kernel takes is its :class:`~stack.kmd.kernels.abi.KernelAbi`.
:func:`decode` checks structure only (and raises :class:`BlobFormatError` naming the offset and
field that failed); submission checks the ABI and the addresses.
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass

from stack.kmd.dtypes import DType
from stack.kmd.errors import BlobFormatError
from stack.kmd.kernels.ids import KernelId

MAGIC = 0x5A5A5A5A
VERSION = 1
MAX_DIMS = 8
#: Upper bound on params/ints/floats per blob (guards decode against absurd counts).
MAX_ITEMS = 4096

HEADER = struct.Struct("<IHHIII3I3IIII")
PARAM = struct.Struct("<QQBBH8q")
TRAILER = struct.Struct("<I")
_U32 = 0xFFFF_FFFF
_U64 = 0xFFFF_FFFF_FFFF_FFFF
# Byte offset of each header field (for error reports).
_HEADER_FIELDS = (
    ("magic", 0), ("version", 4), ("flags", 6), ("kernel_id", 8), ("instruction_size", 12),
    ("param_count", 16), ("grid", 20), ("block", 32), ("shared_mem", 44), ("n_ints", 48),
    ("n_floats", 52),
)  # fmt: skip
_OFF = dict(_HEADER_FIELDS)


@dataclass(frozen=True, slots=True)
class TensorParam:
    """One tensor a kernel reads or writes: where it lives and how to view it."""

    addr: int
    nbytes: int
    dtype: DType
    shape: tuple[int, ...]

    @property
    def elements(self) -> int:
        """Number of elements the shape describes."""
        return math.prod(self.shape)


@dataclass(frozen=True, slots=True)
class LaunchConfig:
    """Grid and block dimensions and dynamic shared memory (used by the CuPy backend)."""

    grid: tuple[int, int, int] = (1, 1, 1)
    block: tuple[int, int, int] = (1, 1, 1)
    shared_mem: int = 0


@dataclass(frozen=True, slots=True)
class InstructionBlob:
    """A decoded blob: a kernel, its tensors, its launch config and its immediates."""

    kernel_id: KernelId
    params: tuple[TensorParam, ...]
    launch: LaunchConfig = LaunchConfig()
    ints: tuple[int, ...] = ()
    floats: tuple[float, ...] = ()
    flags: int = 0


def blob_size(param_count: int, n_ints: int, n_floats: int) -> int:
    """Total bytes of a blob with these counts."""
    return HEADER.size + param_count * PARAM.size + 8 * (n_ints + n_floats) + TRAILER.size


def encode(blob: InstructionBlob) -> bytes:
    """Serialise ``blob``; BlobFormatError names the field that cannot be represented."""
    n_params, n_ints, n_floats = len(blob.params), len(blob.ints), len(blob.floats)
    for name, count in (("param_count", n_params), ("n_ints", n_ints), ("n_floats", n_floats)):
        if count > MAX_ITEMS:
            raise BlobFormatError(
                f"{count} items exceed {MAX_ITEMS}", offset=_OFF[name], field=name
            )
    size = blob_size(n_params, n_ints, n_floats)
    launch = blob.launch
    for name, dim3 in (("grid", launch.grid), ("block", launch.block)):
        if len(dim3) != 3 or any(not 0 <= d <= _U32 for d in dim3):
            raise BlobFormatError(
                f"{name} must be 3 x u32, got {dim3}", offset=_OFF[name], field=name
            )
    if not 0 <= launch.shared_mem <= _U32:
        raise BlobFormatError(
            "shared_mem must be a u32", offset=_OFF["shared_mem"], field="shared_mem"
        )
    if not 0 <= blob.flags <= 0xFFFF:
        raise BlobFormatError("flags must be a u16", offset=_OFF["flags"], field="flags")
    out = bytearray(size)
    HEADER.pack_into(
        out, 0, MAGIC, VERSION, blob.flags, int(blob.kernel_id), size, n_params,
        *launch.grid, *launch.block, launch.shared_mem, n_ints, n_floats,
    )  # fmt: skip
    off = HEADER.size
    for i, p in enumerate(blob.params):
        if len(p.shape) > MAX_DIMS:
            raise BlobFormatError(
                f"param {i} has {len(p.shape)} dims > {MAX_DIMS}",
                offset=off + 17,
                field=f"params[{i}].ndim",
            )
        if not (0 <= p.addr <= _U64 and 0 <= p.nbytes <= _U64):
            raise BlobFormatError(
                f"param {i} addr/nbytes out of u64 range", offset=off, field=f"params[{i}].addr"
            )
        dims = tuple(p.shape) + (0,) * (MAX_DIMS - len(p.shape))
        PARAM.pack_into(out, off, p.addr, p.nbytes, int(p.dtype), len(p.shape), 0, *dims)
        off += PARAM.size
    try:
        struct.pack_into(f"<{n_ints}q", out, off, *blob.ints)
    except struct.error as exc:
        raise BlobFormatError(
            f"ints not representable as i64: {exc}", offset=off, field="ints"
        ) from None
    off += 8 * n_ints
    struct.pack_into(f"<{n_floats}d", out, off, *blob.floats)
    off += 8 * n_floats
    TRAILER.pack_into(out, off, zlib.crc32(memoryview(out)[:off]))
    return bytes(out)


def decode(data: bytes | bytearray | memoryview) -> InstructionBlob:
    """Parse and check a blob; BlobFormatError names the offset and field that failed."""
    buf = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    if len(buf) < HEADER.size + TRAILER.size:
        raise BlobFormatError(
            f"blob of {len(buf)} bytes is shorter than a header", offset=len(buf), field="header"
        )
    (magic, version, flags, kernel_id, size, n_params, g0, g1, g2, b0, b1, b2, shared, n_ints,
     n_floats) = HEADER.unpack_from(buf, 0)  # fmt: skip
    if magic != MAGIC:
        raise BlobFormatError(f"bad magic 0x{magic:08X}", offset=0, field="magic")
    if version != VERSION:
        raise BlobFormatError(
            f"unsupported version {version}", offset=_OFF["version"], field="version"
        )
    if size != len(buf):
        raise BlobFormatError(
            f"instruction_size {size} != blob length {len(buf)}",
            offset=_OFF["instruction_size"],
            field="instruction_size",
        )
    for name, count in (("param_count", n_params), ("n_ints", n_ints), ("n_floats", n_floats)):
        if count > MAX_ITEMS:
            raise BlobFormatError(
                f"{name} {count} exceeds {MAX_ITEMS}", offset=_OFF[name], field=name
            )
    if blob_size(n_params, n_ints, n_floats) != size:
        raise BlobFormatError(
            f"counts imply {blob_size(n_params, n_ints, n_floats)} bytes, header says {size}",
            offset=_OFF["param_count"],
            field="param_count",
        )
    crc_off = size - TRAILER.size
    (crc,) = TRAILER.unpack_from(buf, crc_off)
    if crc != zlib.crc32(buf[:crc_off]):
        raise BlobFormatError("crc32 mismatch", offset=crc_off, field="crc32")
    try:
        kid = KernelId(kernel_id)
    except ValueError:
        raise BlobFormatError(
            f"unknown kernel_id {kernel_id}", offset=_OFF["kernel_id"], field="kernel_id"
        ) from None
    params = []
    off = HEADER.size
    for i in range(n_params):
        addr, nbytes, dt, ndim, reserved, *dims = PARAM.unpack_from(buf, off)
        params.append(_param(i, off, addr, nbytes, dt, ndim, reserved, dims))
        off += PARAM.size
    ints = struct.unpack_from(f"<{n_ints}q", buf, off)
    off += 8 * n_ints
    floats = struct.unpack_from(f"<{n_floats}d", buf, off)
    launch = LaunchConfig((g0, g1, g2), (b0, b1, b2), shared)
    return InstructionBlob(kid, tuple(params), launch, ints, floats, flags)


def _param(
    i: int, off: int, addr: int, nbytes: int, dt: int, ndim: int, reserved: int, dims: list[int]
) -> TensorParam:
    try:
        dtype = DType(dt)
    except ValueError:
        raise BlobFormatError(
            f"unknown dtype {dt}", offset=off + 16, field=f"params[{i}].dtype"
        ) from None
    if ndim > MAX_DIMS:
        raise BlobFormatError(
            f"ndim {ndim} > {MAX_DIMS}", offset=off + 17, field=f"params[{i}].ndim"
        )
    if reserved:
        raise BlobFormatError("reserved must be 0", offset=off + 18, field=f"params[{i}].reserved")
    for d in range(MAX_DIMS):
        v = dims[d]
        if v < 0 or (d >= ndim and v != 0):
            why = "negative" if v < 0 else "set beyond ndim"
            raise BlobFormatError(
                f"dim {d} = {v} {why}", offset=off + 20 + 8 * d, field=f"params[{i}].dims[{d}]"
            )
    shape = tuple(dims[:ndim])
    if math.prod(shape) * dtype.itemsize > nbytes:
        raise BlobFormatError(
            f"shape {shape} of {dtype.name} needs more than nbytes {nbytes}",
            offset=off + 8,
            field=f"params[{i}].nbytes",
        )
    return TensorParam(addr, nbytes, dtype, shape)
