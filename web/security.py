"""The guard in front of every request: read-only methods, an optional bearer token, and
headers that keep the pages offline and unframeable.

Nothing changes state, so GET and HEAD serve everything; the one exception is POST to
:data:`COMPUTE_PATHS` — endpoints that only compute from the request body (the impact of a
pasted patch, too large for a URL). Such a POST is refused cross-site (``Sec-Fetch-Site`` or an
``Origin`` other than the Host: 403) and its body is read here, at most :data:`MAX_BODY`
bytes (413 beyond), before the app sees it.

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
#: Paths that also take a POST whose body they only compute from (no state changes).
COMPUTE_PATHS = frozenset({"/impact", "/api/impact"})
#: Largest request body read (a form-encoded 1 MB patch is up to 3 MB on the wire).
MAX_BODY = 3 * 1024 * 1024
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
    """ASGI middleware: 405 for anything but GET/HEAD (and POST to COMPUTE_PATHS), 401
    without the token (when one is set), 403/413 for a cross-site or oversized POST, security
    headers on every response."""

    def __init__(self, app: ASGIApp, token: str | None = None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        compute = scope["method"] == "POST" and scope["path"] in COMPUTE_PATHS
        if scope["method"] not in READ_METHODS and not compute:
            allow = b"GET, HEAD, POST" if scope["path"] in COMPUTE_PATHS else b"GET, HEAD"
            await _plain(
                send,
                405,
                "read-only",
                "this server only answers GET and HEAD (and POST to compute an impact)",
                [(b"allow", allow)],
            )
            return
        if self.token is not None and not await self._authorised(scope, send):
            return
        if compute:
            refused = _cross_site(scope)
            if refused is not None:
                await _plain(send, 403, "cross-site", refused, [])
                return
            body = await _read_body(scope, receive)
            if body is None:
                await _plain(
                    send,
                    413,
                    "too-large",
                    f"the request body is over {MAX_BODY} bytes; paste a smaller patch",
                    [],
                )
                return
            receive = _replay(body, receive)

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


def _cross_site(scope: Scope) -> str | None:
    """Why a POST is refused as cross-site, or None. ``Sec-Fetch-Site`` decides when the
    browser sends it; else an ``Origin`` must be this server (our ``no-referrer`` policy makes
    a browser send ``Origin: null`` even for its own forms, so only Sec-Fetch-Site clears it)."""
    headers = dict(scope.get("headers") or [])
    site = headers.get(b"sec-fetch-site", b"").decode("latin-1")
    if site:
        return None if site in ("same-origin", "none") else f"a {site} request may not POST here"
    origin = headers.get(b"origin", b"").decode("latin-1")
    host = headers.get(b"host", b"").decode("latin-1")
    if origin == "null":
        return "a request of opaque origin may not POST here"
    if origin and origin.partition("://")[2] != host:
        return f"origin {origin!r} is not this server ({host})"
    return None


async def _read_body(scope: Scope, receive: Receive) -> bytes | None:
    """The whole request body, or None as soon as it is (or says it is) over MAX_BODY."""
    headers = dict(scope.get("headers") or [])
    declared = headers.get(b"content-length", b"0").decode("latin-1")
    if declared.isdigit() and int(declared) > MAX_BODY:
        return None
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break  # the client went away: the app sees an empty body and answers nobody
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the app the body already read, then the client's next events."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


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
