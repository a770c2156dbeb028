"""Execution: one inference of a loaded model, with fault recovery.

The hot path is deliberately short: copy the inputs into the mapped IO buffer, execute each
command buffer recorded at load (one per schedule group, with the tickets of the groups it
waits on; inline on this thread when the model has one stream), wait for the last ticket of
every stream, copy the outputs out of the mapped IO buffer. Nothing is translated, validated
or allocated per run. Where the device has no host mappings the inputs and outputs go through
write/read instead; groups holding translations with conversion scratch are submitted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from stack.errors import UmdError
from stack.runtime.errors import ExecutionFaultError, ModelClosedError
from stack.runtime.executable import Executable
from stack.runtime.inputs import check_inputs
from stack.runtime.loader import DeviceImage
from stack.runtime.opcodes import UMD_DTYPES
from stack.runtime.recovery import DEVICE_FAULTS, RecoveryPolicy
from stack.umd import Ticket, Translated
from stack.umd.protocol import SessionApi

#: Fault kinds that only echo a fault elsewhere (a failed dependency, a reset queue).
_SECONDARY = frozenset({"DEPENDENCY", "RESET"})


@dataclass(frozen=True, slots=True)
class RunStats:
    """What the last run cost: attempts (1 + retries used), wall seconds, submits."""

    attempts: int
    seconds: float
    submits: int
    faults: tuple[str, ...] = ()


class _Fault(Exception):
    """A run attempt failed on the device; carries where (internal to this module)."""

    def __init__(self, cause: UmdError, stream: int | None, group: int | None) -> None:
        super().__init__(str(cause))
        self.cause, self.stream, self.group = cause, stream, group
        self.retryable = isinstance(cause, DEVICE_FAULTS)


class LoadedModel:
    """A model resident on the device, ready to run. Made by ``Runtime.load``.

    Contract: :meth:`run` is synchronous — it returns only after every stream's final fence
    is reached, so the returned arrays are complete and no device work of the run is left
    pending. Runs of one model are serialised (a lock); separate models run independently.
    The model owns its UMD session and all device memory in it (arenas, IO, constants);
    :meth:`close` frees them. Errors: ModelInputError (bad inputs, nothing submitted),
    ExecutionFaultError (device fault or timeout after recovery was exhausted; no outputs),
    ModelClosedError (used after close).
    """

    def __init__(
        self,
        session: SessionApi,
        image: DeviceImage,
        policy: RecoveryPolicy,
        on_close: Callable[[LoadedModel], None] | None = None,
    ) -> None:
        self._session = session
        self._image = image
        self._policy = policy
        self._on_close = on_close
        self._lock = threading.Lock()
        self._closed = False
        self._poisoned: ExecutionFaultError | None = None
        self._scratch_spent = False
        # (attempts, start, end, submits, faults) of the last run: RunStats made on demand.
        self._stats: tuple[int, float, float, int, tuple[str, ...]] | None = None
        # Everything a run needs, resolved once: (name, shape, numpy dtype, address) per
        # input, (session stream, wait group indices) per group, (name, address, shape,
        # dtype) per output — so a run allocates no records and looks nothing up.
        exe = image.exe
        self._in_sig = tuple(
            (t.name, t.shape, t.dtype.numpy, image.addr(t)) for t in exe.input_tensors
        )
        self._in_names = frozenset(t.name for t in exe.input_tensors)
        self._plan = tuple((image.streams[g.stream], g.waits) for g in image.schedule.groups)
        self._out_sig = tuple(
            (t.name, image.addr(t), t.shape, UMD_DTYPES[t.dtype]) for t in exe.output_tensors
        )
        # Host views of the IO buffer (None where the device has no host mappings).
        self._in_views = {
            addr: session.map(addr, shape, UMD_DTYPES[t.dtype])
            for (_, shape, _, addr), t in zip(self._in_sig, exe.input_tensors, strict=True)
        }
        self._out_views = tuple(session.map(a, shape, dt) for _, a, shape, dt in self._out_sig)
        self._inline = len(image.streams) == 1
        # One group, recorded, on one stream, every input and output mapped: a run is the flat
        # sequence of _attempt's first branch — (session stream, command buffer), outputs.
        self._flat: tuple[int, int] | None = None
        self._flat_in = {a: v for a, v in self._in_views.items() if v is not None}
        self._flat_out = tuple(
            (name, view)
            for (name, *_), view in zip(self._out_sig, self._out_views, strict=True)
            if view is not None
        )
        self._plan_stream = image.schedule.groups[0].stream if image.schedule.groups else None
        if (
            self._inline
            and len(image.cmdbufs) == 1
            and image.cmdbufs[0] is not None
            and not any(image.retranslate)
            and len(self._flat_in) == len(self._in_views)
            and len(self._flat_out) == len(self._out_views)
        ):
            self._flat = (self._plan[0][0], image.cmdbufs[0])

    @property
    def executable(self) -> Executable:
        return self._image.exe

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self._image.exe.input_tensors)

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self._image.exe.output_tensors)

    @property
    def session(self) -> SessionApi:
        """The model's UMD session (for tools and fault-injection tests; do not close it)."""
        return self._session

    @property
    def image(self) -> DeviceImage:
        """The device image (buffers, schedule); for inspection and tools."""
        return self._image

    def run(
        self, inputs: Mapping[str, np.ndarray], timeout_s: float = 60.0
    ) -> dict[str, np.ndarray]:
        """Run one inference; returns ``{output name: array}`` (see the class contract).

        ``timeout_s`` bounds each attempt (the wait for every stream's final fence); a retry
        after a fault gets a fresh budget, so a run takes at most attempts × timeout_s.
        """
        with self._lock:
            if self._closed:
                raise ModelClosedError("the model is closed")
            if self._poisoned is not None:
                raise self._poisoned
            pairs = self._inputs(inputs)
            start = time.perf_counter()
            try:
                outputs, submits = self._attempt(pairs, time.monotonic() + timeout_s)
            except _Fault as fault:
                return self._retry(pairs, timeout_s, start, fault)
            self._stats = (1, start, time.perf_counter(), submits, ())
            return outputs

    @property
    def last_stats(self) -> RunStats | None:
        """What the last successful run cost (None before the first)."""
        if self._stats is None:
            return None
        attempts, start, end, submits, faults = self._stats
        return RunStats(attempts, end - start, submits, faults)

    def _retry(
        self,
        pairs: list[tuple[int, np.ndarray]],
        timeout_s: float,
        start: float,
        fault: _Fault,
    ) -> dict[str, np.ndarray]:
        """After a failed first attempt (lock held): recover and retry as the policy allows."""
        faults: list[str] = []
        attempt = 1
        while True:
            faults.append(fault.cause.details.get("fault_kind") or type(fault.cause).__name__)
            reset_error = self._recover()
            if reset_error is not None:
                self._poisoned = self._give_up(fault, attempt, reset_error)
                raise self._poisoned from reset_error
            if attempt >= self._policy.attempts or not fault.retryable:
                raise self._give_up(fault, attempt) from fault.cause
            attempt += 1
            try:
                outputs, submits = self._attempt(pairs, time.monotonic() + timeout_s)
            except _Fault as again:
                fault = again
                continue
            self._stats = (attempt, start, time.perf_counter(), submits, tuple(faults))
            return outputs

    def _inputs(self, inputs: Mapping[str, np.ndarray]) -> list[tuple[int, np.ndarray]]:
        """``(address, array)`` per model input; the checks of :func:`check_inputs` (which
        raises the ModelInputError) done as one pass over the precomputed signature."""
        pairs = []
        if len(inputs) == len(self._in_sig):
            for name, shape, dtype, addr in self._in_sig:
                array = inputs.get(name)
                if (
                    type(array) is not np.ndarray
                    or array.shape != shape
                    or array.dtype != dtype
                    or not array.flags.c_contiguous
                ):
                    break
                pairs.append((addr, array))
            else:
                return pairs
        checked = check_inputs(self._image.exe, inputs)
        return [(self._image.addr(info), array) for info, array in checked]

    def _commands(self) -> list[tuple[Translated, ...]] | tuple[tuple[Translated, ...], ...]:
        """The command buffers of this attempt: the prepared ones, with translations that own
        conversion scratch re-made after their first submission."""
        image = self._image
        if not self._scratch_spent:
            self._scratch_spent = True
            return image.commands
        if not any(image.retranslate):
            return image.commands
        commands = list(image.commands)
        for g, redo in enumerate(image.retranslate):
            if redo:
                ops = list(commands[g])
                for pos, index in redo:
                    ops[pos] = self._session.translate(image.requests[index])
                commands[g] = tuple(ops)
        return commands

    def _attempt(
        self, pairs: list[tuple[int, np.ndarray]], deadline: float
    ) -> tuple[dict[str, np.ndarray], int]:
        session = self._session
        if self._flat is not None and self._scratch_spent:
            # The common case, as a flat sequence: inputs into the mapped IO buffer, one
            # recorded command buffer executed inline, outputs copied out.
            flat_stream, flat_buf = self._flat
            flat_in = self._flat_in
            for addr, array in pairs:
                np.copyto(flat_in[addr], array)
            try:
                ticket = session.execute(flat_stream, flat_buf, (), inline=True)
            except UmdError as exc:
                raise _Fault(exc, self._plan_stream, 0) from exc
            if not session.done(ticket):
                try:
                    session.wait(ticket, timeout_s=max(deadline - time.monotonic(), 0.0))
                except UmdError as exc:
                    raise _Fault(exc, self._plan_stream, 0) from exc
            return {name: view.copy() for name, view in self._flat_out}, 1
        schedule = self._image.schedule
        tickets: list[Ticket] = []
        views = self._in_views
        try:
            for addr, array in pairs:
                view = views.get(addr)
                if view is not None:
                    np.copyto(view, array)
                else:
                    session.write(addr, array)
            commands = self._commands()
        except UmdError as exc:
            raise _Fault(exc, None, None) from exc
        submit, execute, inline = session.submit, session.execute, self._inline
        cmdbufs = self._image.cmdbufs
        for index, ops in enumerate(commands):
            stream, waits = self._plan[index]
            after = [tickets[w] for w in waits] if waits else ()
            buf = cmdbufs[index]
            try:
                if buf is not None:
                    tickets.append(execute(stream, buf, after, inline=inline))
                else:
                    tickets.append(submit(stream, ops, after))
            except UmdError as exc:
                raise _Fault(exc, schedule.groups[index].stream, index) from exc
        for index in schedule.finals:
            if inline and session.done(tickets[index]):
                continue  # executed inline on this thread and complete: nothing to wait for
            try:
                session.wait(tickets[index], timeout_s=max(deadline - time.monotonic(), 0.0))
            except UmdError as exc:
                failed, cause = self._root_fault(tickets, exc, index)
                raise _Fault(cause, schedule.groups[failed].stream, failed) from exc
        read = session.read
        outputs = {
            name: view.copy() if view is not None else read(addr, shape, dtype)
            for (name, addr, shape, dtype), view in zip(self._out_sig, self._out_views, strict=True)
        }
        return outputs, len(tickets)

    def _root_fault(
        self, tickets: list[Ticket], exc: UmdError, default: int
    ) -> tuple[int, UmdError]:
        """The first group (in submission order) that failed by itself rather than because a
        group it waited on failed (fault kinds DEPENDENCY/RESET), with its error."""
        for index, ticket in enumerate(tickets):
            try:
                self._session.wait(ticket, timeout_s=0.0)
            except UmdError as probe:
                if type(probe) is type(exc) and probe.details.get("fault_kind") not in _SECONDARY:
                    return index, probe
        return default, exc

    def _recover(self) -> UmdError | None:
        """Reset every stream of the model; the UMD error if a reset was refused."""
        if not self._policy.reset_on_fault:
            return None
        for stream in self._image.streams:
            try:
                self._session.reset_stream(stream)
            except UmdError as exc:
                return exc
        return None

    def _give_up(
        self, fault: _Fault, attempts: int, reset_error: UmdError | None = None
    ) -> ExecutionFaultError:
        exe = self._image.exe
        ops: list[str] = []
        if fault.group is not None:
            ops = [
                exe.ops[i].name or f"{exe.ops[i].op.name}#{i}"
                for i in self._image.schedule.groups[fault.group].ops
            ]
        err = ExecutionFaultError(
            f"run failed on stream {fault.stream} after {attempts} attempt(s): {fault.cause}",
            stream=fault.stream,
            fault=type(fault.cause).__name__,
            fault_kind=fault.cause.details.get("fault_kind"),
            attempts=attempts,
            op=ops[0] if len(ops) == 1 else None,
            ops=ops,
            cause=fault.cause.to_dict(),
            reset_error=reset_error.to_dict() if reset_error is not None else None,
        )
        if not self._policy.reset_on_fault:
            self._poisoned = err
        return err

    def close(self) -> None:
        """Free the model's device memory and streams (idempotent). Waits for a run in
        progress to finish first."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._session.close()
        if self._on_close is not None:
            self._on_close(self)

    def __enter__(self) -> LoadedModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
