"""Running a linked operator pipeline through the UMD on one session, with error isolation.

A run uploads the supplied tensors, then runs each stage once the stages it depends on have
completed — stages of independent branches at once, on the runner's worker threads
(:mod:`stack.runtime.oppipeline.schedule`). A stage acquires its outputs' blocks from the
session's binned pool (tagged with the stage, aligned as its constraints say), translates the
op (preceded by CASTs into stage scratch when its precision policy computes in another dtype
than an input's), submits it on its stream — the previous stage's, or its own for
``async_preload``, waiting on the producers' tickets — and waits for it. Then it checks the
outputs for NaN/Inf where the descriptor (or the config) forbids them, releases the stage's
scratch and drops one reference on each input: a buffer returns to its bin when its last
holder is done. The run's pool window ends with it (the 1.5 × peak warning, see
:mod:`stack.umd.pool_stats`).

Error isolation (seed 004 §2.3): a module that is refused, faults or produces forbidden NaN/Inf
fails its stage with a :class:`~stack.runtime.errors.ModuleError` naming module, version,
stage and inputs; the stream is reset, every buffer of the run released, and the session stays
usable — other sessions and pipelines never notice. Only a stage whose config declares
``fallback: identity`` continues instead: its first input is copied to its output, a warning is
logged on ``stack.runtime.oppipeline`` and :attr:`PipelineRunner.fallbacks` counts it.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from stack.errors import StackError, UmdError
from stack.runtime.errors import ModelInputError, ModuleError
from stack.runtime.oppipeline.buffers import BufferTable
from stack.runtime.oppipeline.config import read_supplied
from stack.runtime.oppipeline.link import LinkedPipeline, LinkedStage
from stack.runtime.oppipeline.report import PipelineResult, RunReport, StageOutcome
from stack.runtime.oppipeline.schedule import Mark, Timeline, dependencies, run_stages, width
from stack.umd import DType, OpKind, OpRequest, TensorDesc, Ticket, UmdSession

log = logging.getLogger("stack.runtime.oppipeline")
__all__ = ["PipelineResult", "PipelineRunner", "RunReport", "StageOutcome"]
_FLOATS = (DType.F16, DType.F32, DType.F64)


class _StageFailed(Exception):
    def __init__(self, cause: str, message: str, stream_faulted: bool) -> None:
        super().__init__(message)
        self.cause, self.message, self.stream_faulted = cause, message, stream_faulted


class PipelineRunner:
    """Runs one linked pipeline on one UMD session it owns (closed by :meth:`close`).

    Contract: :meth:`run` is synchronous and runs one run at a time (a lock serialises callers);
    it returns every output or raises — ModelInputError (bad inputs), ModuleError (a stage
    failed without a declared fallback), or the UMD's errors for a broken session. Nothing a
    failed run held stays allocated. ``fallbacks`` counts identity fallbacks over all runs;
    ``last_report`` is the report of the last run, failed ones included (the failed stage's
    status ``failed``). A pipeline with several streams runs its independent stages on
    ``width`` worker threads the runner owns (joined by :meth:`close`).
    """

    def __init__(self, linked: LinkedPipeline, session: UmdSession) -> None:
        self.linked = linked
        self.session = session
        self.fallbacks = 0
        self._streams: dict[int, int] = {}
        self._constants: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._shared = threading.Lock()  # stage threads: fallbacks, streams, outcomes
        self.last_report: RunReport | None = None
        self._deps = dependencies(linked.stages, linked.tensors)
        self.width = width(linked.stages)
        self._pool = (
            ThreadPoolExecutor(self.width, thread_name_prefix="pipeline-stage")
            if self.width > 1
            else None
        )
        for sup in linked.config.inputs:
            if sup.file is not None:
                self._constants[sup.name] = self._check(sup.name, np.array(read_supplied(sup)))

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.linked.config.inputs if s.name not in self._constants)

    def _check(self, name: str, array: np.ndarray) -> np.ndarray:
        info = self.linked.tensors[name]
        if tuple(array.shape) != info.shape or array.dtype != info.dtype.numpy:
            raise ModelInputError(
                f"input {name!r} is {list(array.shape)} {array.dtype}, the pipeline takes "
                f"{list(info.shape)} {info.dtype.numpy}",
                input=name,
            )
        return array

    def run(self, inputs: Mapping[str, np.ndarray], *, timeout_s: float = 60.0) -> PipelineResult:
        """One run: every output as a new array, and its report (see the class contract)."""
        unknown = sorted(set(inputs) - set(self.input_names))
        if unknown:
            names = ", ".join(self.input_names)
            raise ModelInputError(
                f"unknown input {unknown[0]!r}; inputs: {names}", input=unknown[0]
            )
        missing = [n for n in self.input_names if n not in inputs]
        if missing:
            raise ModelInputError(f"missing input {missing[0]!r}", input=missing[0])
        arrays = {n: self._check(n, np.asarray(a)) for n, a in inputs.items()}
        arrays.update(self._constants)
        with self._lock:
            return self._run(arrays, timeout_s)

    def _run(self, arrays: dict[str, np.ndarray], timeout_s: float) -> PipelineResult:
        s, tensors = self.session, self.linked.tensors
        table = BufferTable(s)
        outcomes: dict[str, StageOutcome] = {}
        timeline = Timeline()
        s.begin_pool_window()
        try:
            for name, array in arrays.items():
                info = tensors[name]
                align = max((st.spec.constraints.memory_alignment for st in self.linked.stages
                             if name in st.inputs), default=64)  # fmt: skip
                va = table.acquire(name, info.nbytes, refs=info.refs, at="(inputs)",
                                   stage="(inputs)", align=align)  # fmt: skip
                s.write(va, np.ascontiguousarray(array))
                if info.refs == 0:
                    table.drop(name, at="(inputs)")
            tickets: dict[str, Ticket] = {}

            def run_one(st: LinkedStage) -> None:
                outcome = self._stage(st, table, tickets, timeout_s, timeline, outcomes)
                with self._shared:
                    outcomes[st.spec.name] = outcome

            run_stages(self.linked.stages, self._deps, run_one, self._pool)
            outputs = {}
            for name in self.linked.config.outputs:
                info = tensors[name]
                outputs[name] = s.read(table.va(name), info.shape, info.dtype)
                table.drop(name, at="(outputs)")
        except BaseException:
            table.abort()
            self.last_report = self._report(outcomes, table, timeline, failed=True)
            raise
        finally:
            s.end_pool_window()
        self.last_report = self._report(outcomes, table, timeline)
        assert self.last_report is not None
        return PipelineResult(outputs, self.last_report)

    def _report(
        self,
        outcomes: dict[str, StageOutcome],
        table: BufferTable,
        timeline: Timeline,
        failed: bool = False,
    ) -> RunReport | None:
        """The run's report; for a failed run None when the session itself went away."""
        try:
            pool = self.session.pool_stats()
        except StackError:
            if not failed:
                raise
            return None
        with self._shared:
            ran = tuple(
                outcomes[st.spec.name] for st in self.linked.stages if st.spec.name in outcomes
            )
        return RunReport(ran, tuple(table.events), self.fallbacks, pool, tuple(timeline.events))

    def _stream(self, logical: int) -> int:
        with self._shared:
            if logical not in self._streams:
                self._streams[logical] = self.session.create_stream()
            return self._streams[logical]

    def _stage(
        self,
        st: LinkedStage,
        table: BufferTable,
        tickets: dict[str, Ticket],
        timeout_s: float,
        timeline: Timeline,
        outcomes: dict[str, StageOutcome],
    ) -> StageOutcome:
        s, tensors, name = self.session, self.linked.tensors, st.spec.name
        scratch = (name, "scratch")
        for out in st.outputs:  # an output nobody holds is held by its stage until it ends
            info = tensors[out]
            table.acquire(out, info.nbytes, refs=info.refs or 1, at=name, stage=name,
                          align=st.spec.constraints.memory_alignment)  # fmt: skip
        stream = self._stream(st.stream)
        with self._shared:
            waits = [tickets[p] for p in {tensors[i].producer for i in st.inputs} if p in tickets]
        outcome = StageOutcome(name, st.operator.qualified_name, "ok")
        timeline.mark(name, Mark.STARTED)
        try:
            ticket = self._launch(st, table, stream, waits, scratch, timeout_s)
        except _StageFailed as failed:
            if failed.stream_faulted:
                s.reset_stream(stream)
            s.release_stage(scratch)
            error = self._module_error(st, failed)
            if st.spec.fallback is None:
                with self._shared:
                    outcomes[name] = StageOutcome(name, outcome.operator, "failed", error.message)
                raise error from None
            with self._shared:
                self.fallbacks += 1
            log.warning("stage %r fell back to identity: %s", name, error.message)
            ticket = self._identity(st, table, stream, timeout_s)
            outcome = StageOutcome(name, st.operator.qualified_name, "fallback", error.message)
        timeline.mark(name, Mark.COMPLETED)
        with self._shared:
            tickets[name] = ticket
        s.release_stage(scratch)
        for tensor in (*st.inputs, *(o for o in st.outputs if not tensors[o].refs)):
            table.drop(tensor, at=name)
        return outcome

    def _launch(
        self,
        st: LinkedStage,
        table: BufferTable,
        stream: int,
        waits: list[Ticket],
        scratch: tuple[str, str],
        timeout_s: float,
    ) -> Ticket:
        s, tensors = self.session, self.linked.tensors
        reqs, ins = [], []
        for tensor in st.inputs:
            info = tensors[tensor]
            desc = TensorDesc(table.va(tensor), info.shape, info.dtype)
            if info.dtype in _FLOATS and st.dtype in _FLOATS and info.dtype != st.dtype:
                nbytes = max(math.prod(info.shape) * st.dtype.itemsize, 1)
                cast = TensorDesc(s.acquire_block(nbytes, stage=scratch), info.shape, st.dtype)
                reqs.append(OpRequest.make(OpKind.CAST, [desc], [cast]))
                desc = cast
            ins.append(desc)
        outs = [TensorDesc(table.va(o), tensors[o].shape, tensors[o].dtype) for o in st.outputs]
        reqs.append(OpRequest.make(st.operator.op, ins, outs, **dict(st.spec.attrs)))
        try:
            translated = [s.translate(r) for r in reqs]
        except UmdError as exc:
            raise _StageFailed(type(exc).__name__, exc.message, False) from None
        try:
            ticket = s.submit(stream, translated, waits)
            s.wait(ticket, timeout_s)
        except UmdError as exc:
            raise _StageFailed(type(exc).__name__, exc.message, True) from None
        if st.check_nan_inf:
            for name, out in zip(st.outputs, outs, strict=True):
                values = s.read(out.addr, out.shape, out.dtype)
                bad = int(values.size - np.count_nonzero(np.isfinite(values)))
                if bad:
                    raise _StageFailed(
                        "NanInf", f"{bad} NaN/Inf value(s) in output {name!r}", False
                    )
        return ticket

    def _identity(
        self, st: LinkedStage, table: BufferTable, stream: int, timeout_s: float
    ) -> Ticket:
        s, tensors = self.session, self.linked.tensors
        src, dst = tensors[st.inputs[0]], tensors[st.outputs[0]]
        req = OpRequest.make(
            OpKind.COPY,
            [TensorDesc(table.va(src.name), src.shape, src.dtype)],
            [TensorDesc(table.va(dst.name), dst.shape, dst.dtype)],
        )
        ticket = s.submit(stream, [s.translate(req)])
        s.wait(ticket, timeout_s)
        return ticket

    def _module_error(self, st: LinkedStage, failed: _StageFailed) -> ModuleError:
        tensors, op = self.linked.tensors, st.operator
        shown = tuple(
            f"{t}: [{', '.join(map(str, tensors[t].shape))}] {tensors[t].dtype.name.lower()}"
            for t in st.inputs
        )
        return ModuleError(
            f"stage {st.spec.name!r}: module {op.module} operator {op.name} {op.version} failed "
            f"({failed.cause}: {failed.message}) on inputs {'; '.join(shown)}",
            module=op.module, version=op.version, stage=st.spec.name, inputs=shown,
            cause=failed.cause, op=op.name,
        )  # fmt: skip

    def close(self) -> None:
        """Close the session: every block, stream and cached bin goes with its context; join
        the stage threads."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        self.session.close()
