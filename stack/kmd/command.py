"""What a submit puts in a queue's ring: the command and its resolved kernel launches."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stack.kmd.fence import TimelineFence
from stack.kmd.memory import Allocation

KernelFn = Callable[[list[Any], list[Any], tuple[int, ...], tuple[float, ...]], None]


@dataclass(slots=True, eq=False)
class Launch:
    """One kernel launch with its tensors resolved to backend array views."""

    kernel: str
    fn: KernelFn
    ins: list[Any]
    outs: list[Any]
    ints: tuple[int, ...]
    floats: tuple[float, ...]
    addrs: tuple[int, ...]
    #: ``fn`` with its arguments bound, made once: a launch is cached and replayed per submit.
    call: Callable[[], None] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.call = functools.partial(self.fn, self.ins, self.outs, self.ints, self.floats)


@dataclass(slots=True, eq=False)
class Command:
    """What one submit put in the ring."""

    launches: list[Launch]
    fence: TimelineFence
    value: int
    waits: list[tuple[TimelineFence, int]]
    allocs: list[Allocation] = field(default_factory=list)
