"""Which stages of a linked pipeline may run at once, and running them so.

A stage *depends on* the stages that produce its inputs and on the stage before it on the same
logical stream (a stream runs its stages in config order). Stages whose dependencies have all
completed run at once, each on a worker thread of the runner that submits to the stage's UMD
stream and waits for its ticket: independent branches of a branch/merge pipeline (stages on
different streams, ``stream_affinity: async_preload``) overlap on the device; a linear pipeline
runs exactly as before, on the calling thread.

A stage that fails stops the scheduling of new stages; the stages already running finish (their
buffers are dropped as usual) and the failure of the first failed stage in config order is
raised once nothing runs any more, so the caller releases every buffer still held.

:class:`Timeline` is what the stages record — ``started`` when a stage's work is about to be
submitted, ``completed`` when its ticket has been reached — in the order observed; two stages
*overlapped* when each started before the other completed.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from stack.runtime.oppipeline.link import LinkedStage, PipelineTensor


def dependencies(
    stages: Sequence[LinkedStage], tensors: Mapping[str, PipelineTensor]
) -> dict[str, frozenset[str]]:
    """Per stage name: the stages it waits for (its inputs' producers, its stream's previous)."""
    deps: dict[str, frozenset[str]] = {}
    last_on: dict[int, str] = {}
    for st in stages:
        producers = {tensors[t].producer for t in st.inputs}
        before = {last_on[st.stream]} if st.stream in last_on else set()
        deps[st.spec.name] = frozenset(p for p in producers | before if p is not None)
        last_on[st.stream] = st.spec.name
    return deps


def width(stages: Sequence[LinkedStage]) -> int:
    """How many stages can ever run at once: the number of logical streams."""
    return len({st.stream for st in stages})


class Mark(enum.StrEnum):
    STARTED = "started"
    COMPLETED = "completed"


@dataclass(frozen=True, slots=True)
class StageEvent:
    """``stage`` reached ``mark``; ``seq`` orders the events of one run (0, 1, …)."""

    stage: str
    mark: Mark
    seq: int


class Timeline:
    """The stage events of one run, recorded from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[StageEvent] = []

    def mark(self, stage: str, mark: Mark) -> None:
        with self._lock:
            self.events.append(StageEvent(stage, mark, len(self.events)))


def overlapped(events: Sequence[StageEvent], a: str, b: str) -> bool:
    """Whether stages ``a`` and ``b`` ran at once: each started before the other completed
    (False when either did not both start and complete)."""
    seq = {(e.stage, e.mark): e.seq for e in events}
    try:
        return (
            seq[(a, Mark.STARTED)] < seq[(b, Mark.COMPLETED)]
            and seq[(b, Mark.STARTED)] < seq[(a, Mark.COMPLETED)]
        )
    except KeyError:
        return False


def run_stages(
    stages: Sequence[LinkedStage],
    deps: Mapping[str, frozenset[str]],
    run_one: Callable[[LinkedStage], object],
    pool: ThreadPoolExecutor | None,
) -> None:
    """Run every stage once its dependencies completed (see the module docstring); with no
    pool, one after another on this thread. Raises the first failed stage's exception (config
    order) after every started stage has finished."""
    if pool is None:
        for st in stages:
            run_one(st)
        return
    order = {st.spec.name: i for i, st in enumerate(stages)}
    waiting = list(stages)
    done: set[str] = set()
    running: dict[Future[object], LinkedStage] = {}
    failures: list[tuple[int, BaseException]] = []
    while waiting or running:
        if not failures:
            ready = [st for st in waiting if deps[st.spec.name] <= done]
            for st in ready:
                waiting.remove(st)
                running[pool.submit(run_one, st)] = st
        if not running:
            break
        finished, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in finished:
            st = running.pop(future)
            error = future.exception()
            if error is None:
                done.add(st.spec.name)
            else:
                failures.append((order[st.spec.name], error))
    if failures:
        raise min(failures, key=lambda f: f[0])[1]
