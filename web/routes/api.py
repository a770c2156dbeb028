"""The JSON API: one endpoint per page, over the same view functions, described by OpenAPI.

Every endpoint is read-only: GET, and one POST (``/api/impact`` with a pasted patch, too large
for a URL) that only computes. Errors come back as ``{"error", "message", ...}`` with
the command to run where there is one (e.g. ``map-not-ingested``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, Field

from web.data import MapData
from web.views.ask import MAX_QUESTION, ask
from web.views.check_view import check_summary
from web.views.detail import node_detail
from web.views.graph_view import MAX_NODES, graph_elements
from web.views.impact import MAX_TARGET, impact

router = APIRouter(prefix="/api", tags=["api"])
MAX_ID = 400
MAX_NAME = 64

Names = Annotated[list[str], Query(max_length=64)]


def _data(request: Request) -> MapData:
    data: MapData = request.app.state.data
    return data


@router.get("/status", summary="The map: name, root, node and edge counts per kind")
def status(request: Request) -> dict[str, Any]:
    return _data(request).overview()


@router.get("/ask", summary="Ask the map a question: the answer, its intent and citations")
def api_ask(
    request: Request,
    q: Annotated[str, Query(min_length=1, max_length=MAX_QUESTION, description="The question")],
    role: Annotated[str | None, Query(max_length=MAX_NAME, description="Rank for a role")] = None,
) -> dict[str, Any]:
    return ask(_data(request), q, role)


@router.get(
    "/nodes/{node_id:path}",
    summary="One node: location, docs, contract, findings, neighbours with each edge's evidence",
)
def api_node(
    request: Request,
    node_id: Annotated[str, Path(max_length=MAX_ID, description="e.g. interface:umd_kmd.free")],
) -> dict[str, Any]:
    return node_detail(_data(request), node_id)


@router.get("/graph", summary="Graph elements (cytoscape JSON, preset positions), filtered")
def api_graph(
    request: Request,
    kind: Names = [],  # noqa: B006 - FastAPI reads the default, never mutates it
    layer: Names = [],  # noqa: B006
    evidence: Names = [],  # noqa: B006
    limit: Annotated[int, Query(ge=1, le=MAX_NODES)] = 2000,
) -> dict[str, Any]:
    return graph_elements(_data(request), kind, layer, evidence, limit)


@router.get(
    "/impact",
    summary="What must change with a target or a diff, per layer, with explanation paths",
)
def api_impact(
    request: Request,
    target: Annotated[
        str,
        Query(max_length=MAX_TARGET, description="Node id, PATH:LINE, contract entry, name"),
    ] = "",
    diff: Annotated[
        str, Query(max_length=MAX_TARGET, description="Revision range A..B, or A (to HEAD)")
    ] = "",
    conservative: Annotated[
        bool, Query(description="Follow every plausible edge, not only code evidence")
    ] = False,
) -> dict[str, Any]:
    return impact(_data(request), target, diff, conservative)


class PatchBody(BaseModel):
    """A patch to analyse: diff text as ``git diff`` / ``git show`` prints it."""

    patch: str = Field(description="The diff text (at most 1 MB, 1,000 files)")
    conservative: bool = Field(False, description="Follow every plausible edge")


@router.post(
    "/impact",
    summary="What must change with a pasted patch (computes only; changes nothing)",
    responses={400: {"description": "malformed patch"}, 413: {"description": "too large"}},
)
def api_impact_patch(request: Request, body: PatchBody) -> dict[str, Any]:
    return impact(_data(request), conservative=body.conservative, patch=body.patch)


@router.get("/check", summary="Check findings grouped by layer, rule and classification")
def api_check(request: Request) -> dict[str, Any]:
    return check_summary(_data(request))


@router.get("/roles", summary="The roles the config names")
def api_roles(request: Request) -> list[dict[str, Any]]:
    return _data(request).roles()


@router.get(
    "/roles/{role}",
    summary="A role's view: layers, boundary interfaces, scenarios, "
    "findings, holes, recent breaking changes",
)
def api_role(request: Request, role: Annotated[str, Path(max_length=MAX_NAME)]) -> dict[str, Any]:
    return _data(request).role(role)
