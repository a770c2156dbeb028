"""The HTML pages: Home/Ask, Map, node Detail, Check, Impact, Role views and the API docs."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import parse_qsl

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from web.app import html
from web.data import EVIDENCE_KINDS, NODE_KINDS, MapData
from web.errors import BadRequest
from web.routes.api import MAX_ID, MAX_NAME, Names
from web.views.ask import MAX_QUESTION, ask
from web.views.check_view import check_summary
from web.views.detail import node_detail
from web.views.graph_view import MAX_NODES, graph_elements
from web.views.impact import MAX_TARGET, impact

router = APIRouter(include_in_schema=False)


def _data(request: Request) -> MapData:
    data: MapData = request.app.state.data
    return data


@router.get("/", response_class=HTMLResponse)
def home(request: Request) -> HTMLResponse:
    return html(request, "home.html", overview=_data(request).overview())


@router.get("/ask", response_class=HTMLResponse)
def ask_page(
    request: Request,
    q: Annotated[str, Query(max_length=MAX_QUESTION)] = "",
    role: Annotated[str | None, Query(max_length=MAX_NAME)] = None,
) -> HTMLResponse:
    answer = ask(_data(request), q, role or None) if q.strip() else None
    return html(request, "ask.html", q=q, role=role, answer=answer)


@router.get("/map", response_class=HTMLResponse)
def map_page(
    request: Request,
    kind: Names = [],  # noqa: B006 - FastAPI reads the default, never mutates it
    layer: Names = [],  # noqa: B006
    evidence: Names = [],  # noqa: B006
    limit: Annotated[int, Query(ge=1, le=MAX_NODES)] = 2000,
) -> HTMLResponse:
    graph = graph_elements(_data(request), kind, layer, evidence, limit)
    return html(
        request,
        "map.html",
        graph=graph,
        node_kinds=NODE_KINDS,
        evidence_kinds=EVIDENCE_KINDS,
        limit=limit,
    )


@router.get("/nodes/{node_id:path}", response_class=HTMLResponse)
def node_page(request: Request, node_id: Annotated[str, Path(max_length=MAX_ID)]) -> HTMLResponse:
    return html(request, "node.html", node=node_detail(_data(request), node_id))


@router.get("/check", response_class=HTMLResponse)
def check_page(request: Request) -> HTMLResponse:
    return html(request, "check.html", check=check_summary(_data(request)))


@router.get("/impact", response_class=HTMLResponse)
def impact_page(
    request: Request,
    target: Annotated[str, Query(max_length=MAX_TARGET)] = "",
    diff: Annotated[str, Query(max_length=MAX_TARGET)] = "",
    conservative: bool = False,
) -> HTMLResponse:
    asked = bool(target.strip() or diff.strip())
    result = impact(_data(request), target, diff, conservative) if asked else None
    return _impact_html(request, result, target=target, diff=diff, conservative=conservative)


@router.post("/impact", response_class=HTMLResponse)
async def impact_patch_page(request: Request) -> HTMLResponse:
    """The Impact page for a pasted patch (a form field ``patch``; the guard caps the body)."""
    kind = request.headers.get("content-type", "").partition(";")[0].strip()
    if kind != "application/x-www-form-urlencoded":
        raise BadRequest("send the patch as a form (application/x-www-form-urlencoded)")
    fields = dict(parse_qsl((await request.body()).decode("utf-8", "replace")))
    patch, conservative = fields.get("patch", ""), fields.get("conservative") == "true"
    result = await run_in_threadpool(impact, _data(request), conservative=conservative, patch=patch)
    return _impact_html(request, result, patch=patch, conservative=conservative)


def _impact_html(
    request: Request, result: dict[str, object] | None, **form: object
) -> HTMLResponse:
    interfaces = [n for n, _ in _data(request).nodes(kinds={"interface"})]
    defaults: dict[str, object] = {"target": "", "diff": "", "patch": ""}
    return html(
        request,
        "impact.html",
        **{**defaults, **form},
        result=result,
        interfaces=sorted(interfaces),
    )


@router.get("/roles/{role}", response_class=HTMLResponse)
def role_page(request: Request, role: Annotated[str, Path(max_length=MAX_NAME)]) -> HTMLResponse:
    return html(request, "role.html", view=_data(request).role(role))


@router.get("/docs", response_class=HTMLResponse)
def docs_page(request: Request) -> HTMLResponse:
    """Swagger UI from the vendored swagger-ui-dist (never a CDN)."""
    return html(request, "docs.html")
