"""The gRPC server around :class:`TranslatorService`: reflection, health, limits, graceful stop.

An asyncio gRPC server on an event loop of its own (one thread): calls that may wait for a
fence are coroutines whose waits hold no thread (:mod:`stack.umd.service.calls`); all other
work runs on ``max_workers`` worker threads. Admission (:mod:`stack.umd.service.admission`)
still bounds calls per server, client and session, and waits per server and client.

``UmdServer.stop()`` is the graceful shutdown SIGTERM triggers (:mod:`stack.umd.service.serve`):
health turns NOT_SERVING, new calls get UNAVAILABLE, waits in flight end at once with
UNAVAILABLE, other calls in flight get ``drain_s`` to finish, then the server stops (``grace_s``
more for stragglers) and the sessions are closed. The methods of :class:`UmdServer` are called
from ordinary threads; they run what the loop must run on it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc
import grpc.aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio  # type: ignore[attr-defined]
from grpc_reflection.v1alpha import reflection

from stack.umd.driver import Umd
from stack.umd.errors import TransportError
from stack.umd.service import umd_pb2 as pb
from stack.umd.service import umd_pb2_grpc as pb_grpc
from stack.umd.service.admission import Limits
from stack.umd.service.decode import DecodeGuard
from stack.umd.service.servicer import TranslatorService

log = logging.getLogger(__name__)

T = TypeVar("T")
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["InstructionTranslator"].full_name
MiB = 1 << 20


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Knobs of the service (defaults: loopback, 64 MiB messages, seed 000's keepalive)."""

    host: str = "127.0.0.1"
    port: int = 50051
    max_message_bytes: int = 64 * MiB
    keepalive_time_s: float = 10.0
    keepalive_timeout_s: float = 30.0
    session_timeout_s: float = 30.0
    max_workers: int = 32
    limits: Limits = field(default_factory=Limits)
    drain_s: float = 0.5
    grace_s: float = 5.0
    backend: str | None = None

    def options(self) -> list[tuple[str, int]]:
        return [
            ("grpc.max_receive_message_length", self.max_message_bytes),
            ("grpc.max_send_message_length", self.max_message_bytes),
            ("grpc.keepalive_time_ms", int(self.keepalive_time_s * 1000)),
            ("grpc.keepalive_timeout_ms", int(self.keepalive_timeout_s * 1000)),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_ping_interval_without_data_ms", 1000),
            ("grpc.so_reuseport", 0),
        ]


class UmdServer:
    """One gRPC server serving one :class:`Umd` (created here unless given)."""

    def __init__(self, config: ServerConfig | None = None, umd: Umd | None = None) -> None:
        self.config = config or ServerConfig()
        self._owns_umd = umd is None
        self.umd = umd if umd is not None else Umd(self.config.backend)
        self._workers = futures.ThreadPoolExecutor(
            self.config.max_workers, thread_name_prefix="umd-rpc"
        )
        self.service = TranslatorService(
            self.umd,
            session_timeout_s=self.config.session_timeout_s,
            limits=self.config.limits,
            executor=self._workers,
        )
        self.health = health_aio.HealthServicer()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="umd-aio", daemon=True)
        self._thread.start()
        self._server = self._on_loop(self._build())
        self.port = 0
        self._stopped = threading.Event()
        self._stop_lock = threading.Lock()

    async def _build(self) -> grpc.aio.Server:
        server = grpc.aio.server(
            migration_thread_pool=self._workers,
            interceptors=[DecodeGuard()],
            options=self.config.options(),
        )
        pb_grpc.add_InstructionTranslatorServicer_to_server(self.service, server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable_server_reflection(
            (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
        )
        return server

    def _on_loop(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def start(self) -> int:
        """Bind and serve; returns the bound port (useful with ``port=0``). TransportError
        when the address cannot be bound (busy port, foreign address)."""
        where = f"{self.config.host}:{self.config.port}"
        try:
            self.port = self._on_loop(self._bind(where))
        except RuntimeError:  # grpc's way of saying the bind failed
            self.port = 0
        if self.port == 0:
            self._close_loop()
            raise TransportError(f"cannot bind {where}: address in use or not available")
        log.info("umd service on %s:%d", self.config.host, self.port)
        return self.port

    async def _bind(self, where: str) -> int:
        port = self._server.add_insecure_port(where)
        if port:
            await self._server.start()
            for name in ("", SERVICE_NAME):
                await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        return port

    def stop(self, grace_s: float | None = None) -> None:
        """Graceful shutdown (idempotent): NOT_SERVING, end waits, drain, stop, close sessions."""
        with self._stop_lock:
            if self._stopped.is_set():
                return
            grace = self.config.grace_s if grace_s is None else grace_s
            if self._thread.is_alive():
                self._on_loop(self.health.enter_graceful_shutdown())
                self.service.shutting_down.set()
                self._loop.call_soon_threadsafe(self.service.end_waits)
                self.service.wait_idle(self.config.drain_s)
                self._on_loop(self._server.stop(grace))
                self._close_loop()
            self._workers.shutdown(wait=False, cancel_futures=True)  # a stuck call keeps no one
            self.service.shm.close_all()
            if self._owns_umd:
                self.umd.close()
            self._stopped.set()
            log.info("umd service stopped")

    def _close_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until :meth:`stop` has finished (True) or the timeout passes."""
        return self._stopped.wait(timeout_s)
