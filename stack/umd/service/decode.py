"""Requests that are not valid protobuf get INVALID_ARGUMENT, never UNKNOWN.

The asyncio gRPC server answers UNKNOWN when a request deserializer raises. :class:`DecodeGuard`
(a server interceptor) wraps every method's deserializer so that undecodable bytes become an
:class:`Undecodable` request instead, and every unary handler so that such a request is refused
with INVALID_ARGUMENT before the handler runs. In a request stream an :class:`Undecodable`
chunk raises :class:`~stack.umd.errors.InvalidRequestError` on first use, which the handler's
error mapping answers INVALID_ARGUMENT too.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from stack.umd.errors import InvalidRequestError

_FACTORIES = {
    (False, False): grpc.unary_unary_rpc_method_handler,
    (False, True): grpc.unary_stream_rpc_method_handler,
    (True, False): grpc.stream_unary_rpc_method_handler,
    (True, True): grpc.stream_stream_rpc_method_handler,
}


class Undecodable:
    """Bytes a method's request type could not parse; any field access raises."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __getattr__(self, name: str) -> Any:
        raise InvalidRequestError(self.reason, field="request")


def _decoder(parse: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def decode(data: bytes) -> Any:
        try:
            return parse(data)
        except DecodeError as exc:
            return Undecodable(f"cannot decode the request: {exc}")

    return decode


def _guarded(behavior: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(behavior):

        async def guarded_async(request: Any, context: grpc.aio.ServicerContext) -> Any:
            if isinstance(request, Undecodable):
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.reason)
            return await behavior(request, context)

        return guarded_async

    if inspect.isgeneratorfunction(behavior):  # the server iterates a sync stream handler

        def guarded_stream(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            if isinstance(request, Undecodable):
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.reason)
            yield from behavior(request, context)

        return guarded_stream

    def guarded(request: Any, context: grpc.ServicerContext) -> Any:
        if isinstance(request, Undecodable):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.reason)
        return behavior(request, context)

    return guarded


class DecodeGuard(grpc.aio.ServerInterceptor):
    """Server interceptor: undecodable requests are INVALID_ARGUMENT (see the module)."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None or handler.request_deserializer is None:
            return handler
        streaming = (handler.request_streaming, handler.response_streaming)
        behavior = next(
            b
            for b in (
                handler.unary_unary,
                handler.unary_stream,
                handler.stream_unary,
                handler.stream_stream,
            )
            if b is not None
        )
        if not handler.request_streaming:
            behavior = _guarded(behavior)
        return _FACTORIES[streaming](
            behavior,
            request_deserializer=_decoder(handler.request_deserializer),
            response_serializer=handler.response_serializer,
        )
