"""The guard in front of every request: read-only methods, an optional bearer token, and
headers that keep the pages offline and unframeable.

The token is compared in constant time (:func:`hmac.compare_digest`). A browser presents it
once as ``?token=...``; the guard then sets an HttpOnly, SameSite=Strict cookie and redirects
to the same URL without it, so the token does not stay in the address bar or in links.
API clients send ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import hmac
import json
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "stackmap_token"
READ_METHODS = frozenset({"GET", "HEAD"})
#: Everything from this server, nothing from anywhere else (no CDN, no font host).
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]

#: Vendored releases change only with their version (VENDOR.json): browsers may keep them a day.
VENDOR_CACHE = [(b"cache-control", b"public, max-age=86400")]


def _same(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


class Guard:
    """ASGI middleware: 405 for anything but GET/HEAD, 401 without the token (when one is
    set), security headers on every response."""

    def __init__(self, app: ASGIApp, token: str | None = None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] not in READ_METHODS:
            await _plain(
                send,
                405,
                "read-only",
                "this server only answers GET and HEAD",
                [(b"allow", b"GET, HEAD")],
            )
            return
        if self.token is not None and not await self._authorised(scope, send):
            return

        extra = HEADERS + (VENDOR_CACHE if scope["path"].startswith("/static/vendor/") else [])

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + extra
            await send(message)

        await self.app(scope, receive, with_headers)

    async def _authorised(self, scope: Scope, send: Send) -> bool:
        assert self.token is not None
        headers = dict(scope.get("headers") or [])
        auth = headers.get(b"authorization", b"").decode("latin-1")
        if auth[:7].lower() == "bearer " and _same(auth[7:].strip(), self.token):
            return True
        cookie = SimpleCookie(headers.get(b"cookie", b"").decode("latin-1"))
        if COOKIE in cookie and _same(cookie[COOKIE].value, self.token):
            return True
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"))
        given = [v for k, v in query if k == "token"]
        if given and _same(given[-1], self.token):
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            location = scope["path"] + (f"?{rest}" if rest else "")
            cookie_value = f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/"
            await _plain(
                send,
                303,
                "authorised",
                "token accepted",
                [(b"location", location.encode()), (b"set-cookie", cookie_value.encode())],
            )
            return False
        await _plain(
            send,
            401,
            "unauthorised",
            "this server needs its token: send 'Authorization: Bearer <token>', or open the "
            "URL `stackmap serve` printed (it carries ?token=...)",
            [(b"www-authenticate", b"Bearer")],
        )
        return False


async def _plain(
    send: Send, status: int, code: str, message: str, extra: list[tuple[bytes, bytes]]
) -> None:
    body = json.dumps({"error": code, "message": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *extra,
                *HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
