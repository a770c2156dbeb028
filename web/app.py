"""The web UI: a read-only FastAPI app over one repository's map.

:func:`create_app` wires the pages (:mod:`web.routes.pages`), the JSON API
(:mod:`web.routes.api`), the vendored static assets, self-hosted API docs, the request guard
(:mod:`web.security`) and trusted-host checking. Errors render as a page or as JSON with what
to do next (:mod:`web.errors`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from web.data import MapData
from web.errors import WebError
from web.security import Guard

HERE = Path(__file__).parent
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


def node_url(node_id: str) -> str:
    """The detail page of a node (``#`` and ``?`` in ids are escaped; ``/`` and ``:`` kept)."""
    return "/nodes/" + quote(node_id, safe=":/")


def make_templates() -> Jinja2Templates:
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.filters["nodeurl"] = node_url
    templates.env.filters["short"] = lambda s: str(s).split(":", 1)[-1]
    return templates


def create_app(
    data: MapData, *, token: str | None = None, allowed_hosts: list[str] | None = None
) -> FastAPI:
    """The app for ``data``'s repository. ``token``: every request must carry it;
    ``allowed_hosts``: Host header values accepted (loopback names when None)."""
    from web.routes import api, pages

    app = FastAPI(
        title="StackMap",
        summary="Read-only API over a stack's knowledge map",
        version="1",
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.data = data
    app.state.templates = make_templates()
    app.include_router(api.router)
    app.include_router(pages.router)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.add_exception_handler(WebError, _web_error)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_middleware(Guard, token=token)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts or list(LOOPBACK_HOSTS))
    return app


def _respond(request: Request, status: int, record: dict[str, Any]) -> Response:
    if request.url.path.startswith("/api/") or request.url.path == "/openapi.json":
        return JSONResponse(record, status_code=status)
    templates: Jinja2Templates = request.app.state.templates
    return templates.TemplateResponse(
        request, "error.html", {"error": record, "status": status}, status_code=status
    )


async def _web_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, WebError)
    return _respond(request, exc.status, exc.to_dict())


async def _invalid(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    problems = [
        f"{'.'.join(str(x) for x in e['loc'][1:]) or 'request'}: {e['msg']}" for e in exc.errors()
    ]
    return _respond(request, 400, {"error": "bad-request", "message": "; ".join(problems)})


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = "no such page" if exc.status_code == 404 else str(exc.detail)
    return _respond(
        request,
        exc.status_code,
        {"error": f"http-{exc.status_code}", "message": message, "path": request.url.path},
    )


def html(request: Request, template: str, **context: Any) -> HTMLResponse:
    """Render a page template with the nav's roles and the request."""
    data: MapData = request.app.state.data
    templates: Jinja2Templates = request.app.state.templates
    return templates.TemplateResponse(
        request, template, {"roles": data.roles(), "layers": data.layers(), **context}
    )
