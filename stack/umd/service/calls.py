"""Plumbing every handler of the UMD service shares: admission, touch, replay, waits, errors.

The service runs on a gRPC asyncio server (:mod:`stack.umd.service.server`). Handlers that
never wait are plain functions the server runs on its worker threads; :func:`rpc` wraps them.
Handlers that may wait for a fence are coroutines wrapped by :func:`arpc`: their work (decode,
translate, submit, copy) runs on the same worker threads through :meth:`ServiceBase._run`, and
their wait is a future the KMD's completion interrupt resolves (:meth:`UmdSession.on_done`) —
a waiting call holds no thread at all, so no number of waits can starve other clients.

:func:`rpc` wraps a unary handler of :class:`ServiceBase`'s subclass: the call is admitted
first (:mod:`stack.umd.service.admission`: per-server, per-client, per-session and wait-slot
limits, RESOURCE_EXHAUSTED beyond them), touches its session on the way in and out (KeepAlive
semantics: any call keeps a session alive, and a session with a call in flight never expires),
and maps :class:`~stack.errors.UmdError` to its status code (:mod:`stack.umd.service.status`).
While the server drains for shutdown, new calls get UNAVAILABLE and waits in flight end with
UNAVAILABLE at once (:meth:`ServiceBase.end_waits`); other calls already running finish.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, ParamSpec, TypeVar

import grpc
import grpc.aio

from stack.errors import UmdError
from stack.umd.driver import Umd
from stack.umd.errors import TransportError, UmdTimeoutError
from stack.umd.service import umd_pb2 as pb
from stack.umd.service.admission import Admission, Admitted, Limits
from stack.umd.service.convert import RequestDecoder
from stack.umd.service.shm import ShmRegistry
from stack.umd.service.status import abort, code_of, message_of
from stack.umd.session import Ticket, UmdSession

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")
R = TypeVar("R")
_DEFAULT_WAIT_S = 30.0


def _waits(request: Any) -> bool:
    """True for a request that blocks on a fence by design."""
    if isinstance(request, pb.WaitFenceRequest):
        return True
    if isinstance(request, pb.ExecuteRequest):
        return len(request.waits) > 0
    return bool(getattr(request, "wait", False)) and not getattr(request, "translate_only", True)


def rpc(fn: F) -> F:
    """Wrap a unary handler: admission, drain refusal, touch, UmdError → status code.

    An exception that is not a UmdError is a server bug: it is logged with its traceback and
    answered INTERNAL (never UNKNOWN, never the traceback to the client).
    """

    @functools.wraps(fn)
    def wrapper(self: ServiceBase, request: Any, context: grpc.ServicerContext) -> Any:
        sid = getattr(request, "session_id", 0)
        ticket = self._enter(context, sid, _waits(request))
        self.calls[fn.__name__] += 1
        try:
            return fn(self, request, context)
        except UmdError as exc:
            abort(context, exc)
        except grpc.RpcError:  # the caller went away mid-stream: nobody to answer
            raise
        except Exception:  # a server bug: logged, answered INTERNAL (handlers never abort)
            log.exception("%s failed", fn.__name__)
            context.abort(grpc.StatusCode.INTERNAL, f"{fn.__name__}: internal error (logged)")
        finally:
            self._leave(ticket, sid)

    return wrapper  # type: ignore[return-value]


def arpc(fn: F) -> F:
    """:func:`rpc` for a coroutine handler (one that may wait): the same admission, touch,
    drain refusal and error mapping, with the aio context's awaitable ``abort``. A caller that
    goes away cancels the coroutine; its admission is released all the same."""

    @functools.wraps(fn)
    async def wrapper(self: ServiceBase, request: Any, context: grpc.aio.ServicerContext) -> Any:
        sid = getattr(request, "session_id", 0)
        if self.shutting_down.is_set():
            await context.abort(grpc.StatusCode.UNAVAILABLE, "server is shutting down")
        try:
            ticket = self.admission.enter(context.peer(), sid, _waits(request))
        except UmdError as exc:
            await context.abort(code_of(exc), message_of(exc))
        self._touch(sid)
        self.calls[fn.__name__] += 1
        try:
            return await fn(self, request, context)
        except UmdError as exc:
            await context.abort(code_of(exc), message_of(exc))
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception:  # a server bug: logged, answered INTERNAL (handlers never abort)
            log.exception("%s failed", fn.__name__)
            await context.abort(grpc.StatusCode.INTERNAL, f"{fn.__name__}: internal error (logged)")
        finally:
            self._leave(ticket, sid)

    return wrapper  # type: ignore[return-value]


class ServiceBase:
    """State and helpers of the servicer (one :class:`Umd`; sessions get ``session_timeout_s``
    unless they ask otherwise)."""

    def __init__(
        self,
        umd: Umd,
        *,
        session_timeout_s: float = 30.0,
        limits: Limits | None = None,
        replay_window: int = 1024,
        executor: Executor | None = None,
    ) -> None:
        self.umd = umd
        self.executor = executor  # the server's worker threads (None: the loop's default)
        self.session_timeout_s = session_timeout_s
        self.admission = Admission(limits or Limits())
        self.replay_window = replay_window
        self.shm = ShmRegistry()
        self.decoder = RequestDecoder()
        self.start_ms = int(time.time() * 1000)
        self.shutting_down = threading.Event()
        self._replay: dict[int, OrderedDict[int, Any]] = {}
        self.calls: Counter[str] = Counter()  # admitted unary calls by method (for tools)
        self._waiters: set[asyncio.Future[None]] = set()  # touched on the event loop only
        umd.sessions.busy = self.admission.busy

    @property
    def draining(self) -> bool:
        return self.shutting_down.is_set()

    # -- plumbing -------------------------------------------------------------------------
    def _enter(self, context: grpc.ServicerContext, sid: int, waits: bool) -> Admitted:
        if self.shutting_down.is_set():
            context.abort(grpc.StatusCode.UNAVAILABLE, "server is shutting down")
        try:
            ticket = self.admission.enter(context.peer(), sid, waits)
        except UmdError as exc:
            abort(context, exc)
        self._touch(sid)
        return ticket

    def _leave(self, ticket: Admitted, sid: int) -> None:
        self._touch(sid)
        self.admission.leave(ticket)

    def _touch(self, sid: int) -> None:
        if sid:
            session = self.umd.sessions.find(sid)
            if session is not None:
                session.touch()

    def wait_idle(self, timeout_s: float) -> bool:
        """Block until no call is in flight (True) or the timeout passes (False)."""
        return self.admission.wait_idle(timeout_s)

    def _session(self, session_id: int) -> UmdSession:
        session = self.umd.sessions.get(session_id)
        session.touch()
        return session

    def _replayed(self, session: UmdSession, request_id: int) -> Any:
        if not request_id:
            return None
        window = self._replay.get(session.key)
        return None if window is None else window.get(request_id)

    def _remember(self, session: UmdSession, request_id: int, response: Any) -> None:
        if not request_id:
            return
        window = self._replay.get(session.key)
        if window is None:
            window = self._replay.setdefault(session.key, OrderedDict())
            session.on_close.append(lambda: self._forget(session.key))
        window[request_id] = response
        while len(window) > self.replay_window:
            window.popitem(last=False)

    def _forget(self, key: int) -> None:
        self._replay.pop(key, None)

    async def _run(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Run blocking work (translate, submit, copy) on a worker thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, functools.partial(fn, *args, **kwargs))

    async def _wait(
        self, session: UmdSession, ticket: Ticket, ms: int, context: grpc.aio.ServicerContext
    ) -> None:
        """Wait for a fence without holding a thread: at most ``max_wait_s`` (whatever ``ms``
        asks) and the caller's deadline; UmdTimeoutError past them, TransportError
        (UNAVAILABLE) when the server shuts down, the fence's own fault when it failed."""
        cap = self.admission.limits.max_wait_s
        asked = ms / 1000 if ms else _DEFAULT_WAIT_S
        remaining = context.time_remaining()
        limit = min(asked, cap) if remaining is None else max(0.0, min(asked, cap, remaining))
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def reached() -> None:  # on the KMD queue's worker thread, or here when already done
            loop.call_soon_threadsafe(_settle, done, None)

        self._waiters.add(done)
        try:
            if self.shutting_down.is_set():
                raise TransportError("server is shutting down")
            session.on_done(ticket, reached)
            try:
                await asyncio.wait_for(asyncio.shield(done), limit)
            except TimeoutError:
                raise UmdTimeoutError(
                    f"fence {ticket.value} not reached within {limit:g} s"
                    + (f" (waits are capped at {cap:g} s)" if asked > cap else "")
                ) from None
        finally:
            self._waiters.discard(done)
        session.wait(ticket, 0)  # reached: returns at once, or raises the fence's fault

    def end_waits(self) -> None:
        """End every wait in flight with UNAVAILABLE (call on the event loop, at shutdown)."""
        for waiter in list(self._waiters):
            _settle(waiter, TransportError("server is shutting down"))


def _settle(future: asyncio.Future[None], error: BaseException | None) -> None:
    if not future.done():
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)
