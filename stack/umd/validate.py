"""Stage 1 of the pipeline: validation, split into a structural part and an address part.

The structural check (descriptors legal, op known) runs on a cache miss only: a hit means an
identical structure was validated before. The address check (every tensor's bytes inside one of
the session's allocations) runs on every request, hit or miss. Both raise
:class:`~stack.umd.errors.InvalidRequestError` subclasses naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from stack.kmd.blob import MAX_DIMS
from stack.kmd.dtypes import DType
from stack.umd.errors import AddressError, InvalidRequestError, UnknownOpError
from stack.umd.ops import Layout, OpKind, OpRequest, TensorDesc

_MAX_BYTES = 1 << 62
_U64 = (1 << 64) - 1


def check_structure(req: OpRequest) -> None:
    """Raise unless the request is well-formed: known op, legal descriptors, legal attrs."""
    if not isinstance(req.op, OpKind):
        known = ", ".join(k.name for k in OpKind)
        raise UnknownOpError(f"unknown op {req.op!r}; known: {known}", field="op")
    for group in ("inputs", "outputs"):
        descs = getattr(req, group)
        if not isinstance(descs, tuple):
            raise InvalidRequestError(f"{group} must be a tuple", field=group)
        for i, desc in enumerate(descs):
            check_desc(desc, f"{group}[{i}]")
    if not req.outputs:
        raise InvalidRequestError("an op needs at least one output", field="outputs")
    for item in req.attrs:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
            raise InvalidRequestError(
                f"attribute {item!r} is not a (name, value) pair", field="attrs"
            )


def check_desc(desc: TensorDesc, where: str) -> None:
    """Raise unless ``desc`` is a legal descriptor (``where`` prefixes the field name)."""
    if not isinstance(desc, TensorDesc):
        raise InvalidRequestError(f"{where} is not a TensorDesc", field=where)
    if not isinstance(desc.dtype, DType):
        raise InvalidRequestError(f"{where} has no valid dtype", field=f"{where}.dtype")
    if not isinstance(desc.layout, Layout):
        raise InvalidRequestError(f"{where} has no valid layout", field=f"{where}.layout")
    shape = desc.shape
    if not isinstance(shape, tuple) or len(shape) > MAX_DIMS:
        raise InvalidRequestError(
            f"{where}.shape must be a tuple of at most {MAX_DIMS} dims", field=f"{where}.shape"
        )
    if any(type(d) is not int or d < 0 for d in shape):
        raise InvalidRequestError(
            f"{where}.shape {shape} has a non-integer or negative dim", field=f"{where}.shape"
        )
    if math.prod(shape) * desc.dtype.itemsize > _MAX_BYTES:
        raise InvalidRequestError(f"{where} is too large", field=f"{where}.shape")
    if type(desc.addr) is not int or not 0 <= desc.addr <= _U64:
        raise InvalidRequestError(f"{where}.addr is not a u64", field=f"{where}.addr")
    if desc.layout is not Layout.ANY and len(shape) != 4:
        raise InvalidRequestError(
            f"{where} is {desc.layout.name} but not 4-D", field=f"{where}.layout"
        )


def check_addresses(req: OpRequest, contains: Callable[[int, int], bool]) -> None:
    """Raise :class:`AddressError` unless every tensor lies inside one session allocation."""
    for group, descs in (("inputs", req.inputs), ("outputs", req.outputs)):
        for i, d in enumerate(descs):
            if not contains(d.addr, d.byte_size):
                raise AddressError(
                    f"{group}[{i}] [0x{d.addr:x}, +{d.byte_size}) is not inside one allocation "
                    "of this session",
                    field=f"{group}[{i}].addr",
                )
