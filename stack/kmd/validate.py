"""The one place ioctl arguments are validated, before any state is touched.

Checks are by field name (every record uses the same names for the same things), so adding
an ioctl adds no validation code unless it brings a new kind of field. Failures raise
InvalidArgumentError naming the field. Checks that need driver state (does the handle exist,
is the address mapped, does the blob fit its kernel ABI) happen in the handlers, still before
anything changes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, cast

from stack.kmd.dtypes import DType
from stack.kmd.errors import InvalidArgumentError
from stack.kmd.faults import INJECTABLE, FaultKind
from stack.kmd.ioctl import ARGS, ExecuteCmdbufArgs, Ioctl

U64_MAX = (1 << 64) - 1
MAX_ALIGN = 1 << 30


def _u64(name: str, v: Any) -> None:
    if type(v) is int and 0 <= v <= U64_MAX:  # the common case, decided without isinstance
        return
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= U64_MAX:
        raise InvalidArgumentError(
            f"{name} must be an integer in [0, 2**64), got {v!r}", field=name
        )


def _align(name: str, v: Any) -> None:
    _u64(name, v)
    if not 0 < v <= MAX_ALIGN or v & (v - 1):
        raise InvalidArgumentError(f"align must be a power of two <= 2**30, got {v}", field=name)


def _flag(name: str, v: Any) -> None:
    if not isinstance(v, bool):
        raise InvalidArgumentError(f"{name} must be a bool, got {v!r}", field=name)


def _timeout(name: str, v: Any) -> None:
    ok = v is None or (isinstance(v, int | float) and not isinstance(v, bool) and v >= 0)
    if not ok or (v is not None and math.isnan(v)):
        raise InvalidArgumentError(f"timeout_s must be None or >= 0, got {v!r}", field=name)


def _pair(name: str, v: Any) -> None:
    if not isinstance(v, tuple) or len(v) != 2:
        raise InvalidArgumentError(f"{name} must be a (fence, value) pair, got {v!r}", field=name)
    _u64(f"{name}.fence", v[0])
    _u64(f"{name}.value", v[1])


def _signal(name: str, v: Any) -> None:
    _pair(name, v)
    if v[1] == 0:
        raise InvalidArgumentError("a signal value must be >= 1", field=name)


def _waits(name: str, v: Any) -> None:
    if not isinstance(v, tuple):
        raise InvalidArgumentError(f"{name} must be a tuple of pairs", field=name)
    for i, pair in enumerate(v):
        _pair(f"{name}[{i}]", pair)


def _rebinds(name: str, v: Any) -> None:
    if not isinstance(v, tuple):
        raise InvalidArgumentError(f"{name} must be a tuple of (old, new) pairs", field=name)
    for i, pair in enumerate(v):
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise InvalidArgumentError(f"{name}[{i}] must be an (old, new) pair", field=name)
        _u64(f"{name}[{i}].old", pair[0])
        _u64(f"{name}[{i}].new", pair[1])


def _blobs(name: str, v: Any) -> None:
    if not isinstance(v, tuple) or not all(type(b) is bytes for b in v):
        raise InvalidArgumentError(f"{name} must be a tuple of bytes", field=name)


def _data(name: str, v: Any) -> None:
    if not isinstance(v, memoryview):
        raise InvalidArgumentError(f"{name} must be a memoryview", field=name)


def _shape(name: str, v: Any) -> None:
    if v is not None and (
        not isinstance(v, tuple) or not all(isinstance(d, int) and d >= 0 for d in v)
    ):
        raise InvalidArgumentError(f"{name} must be a tuple of dims >= 0, got {v!r}", field=name)


def _dtype(name: str, v: Any) -> None:
    if v is not None and not isinstance(v, DType):
        raise InvalidArgumentError(f"{name} must be a DType, got {v!r}", field=name)


def _kind(name: str, v: Any) -> None:
    if not isinstance(v, FaultKind) or v not in INJECTABLE:
        known = ", ".join(k.name for k in sorted(INJECTABLE))
        raise InvalidArgumentError(f"cannot inject {v!r}; injectable: {known}", field=name)


def _callback(name: str, v: Any) -> None:
    if not callable(v):
        raise InvalidArgumentError(f"{name} must be callable", field=name)


FIELD_CHECKS: dict[str, Callable[[str, Any], None]] = {
    "ctx": _u64, "queue": _u64, "fence": _u64, "va": _u64, "nbytes": _u64, "offset": _u64,
    "value": _u64, "initial": _u64, "after": _u64, "align": _align, "host_visible": _flag,
    "timeout_s": _timeout, "signal": _signal, "wait": _waits, "blobs": _blobs, "data": _data,
    "kind": _kind, "callback": _callback, "shape": _shape, "dtype": _dtype, "cmdbuf": _u64,
    "rebind": _rebinds, "inline": _flag,
}  # fmt: skip


#: Per argument record type: its (field name, check) pairs, resolved once (the hot path).
_CHECKS: dict[type, tuple[tuple[str, Callable[[str, Any], None]], ...]] = {
    t: tuple((f.name, FIELD_CHECKS[f.name]) for f in dataclasses.fields(cast(Any, t)))
    for t in set(ARGS.values())
}


def _plain_execute(a: Any) -> bool:
    """The usual EXECUTE_CMDBUF, recognised in one expression (the run path's ioctl): u64
    handles, a (fence, value >= 1) signal, no waits, no rebinds, a bool ``inline``. Anything
    else goes through the field checks, which name the field at fault."""
    sig = a.signal
    return (
        type(a.ctx) is int
        and type(a.queue) is int
        and type(a.cmdbuf) is int
        and type(sig) is tuple
        and len(sig) == 2
        and type(sig[0]) is int
        and type(sig[1]) is int
        and 0 <= a.ctx <= U64_MAX
        and 0 <= a.queue <= U64_MAX
        and 0 <= a.cmdbuf <= U64_MAX
        and 0 <= sig[0] <= U64_MAX
        and 1 <= sig[1] <= U64_MAX
        and a.wait == ()
        and a.rebind == ()
        and type(a.inline) is bool
    )


def validate(cmd: Any, args: Any) -> Ioctl:
    """Check ``cmd`` is an ioctl, ``args`` its record type, and every field; return the Ioctl."""
    if cmd is Ioctl.EXECUTE_CMDBUF and type(args) is ExecuteCmdbufArgs and _plain_execute(args):
        return cmd
    if type(cmd) is Ioctl:
        ioctl = cmd
    else:
        try:
            ioctl = Ioctl(cmd)
        except ValueError:
            raise InvalidArgumentError(f"unknown ioctl 0x{int(cmd):08x}", field="cmd") from None
    expected = ARGS[ioctl]
    if type(args) is not expected:
        raise InvalidArgumentError(
            f"{ioctl.name} takes {expected.__name__}, got {type(args).__name__}", field="args"
        )
    for name, check in _CHECKS[expected]:
        check(name, getattr(args, name))
    return ioctl
