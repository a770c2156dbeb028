"""The typed arguments of the agent's tools (pydantic models: langchain reads them as the
tools' schemas, the toolbox validates every call against them)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class SearchArgs(BaseModel):
    query: str = Field(description="Words or a code name to look for on the map.")
    limit: int = Field(6, ge=1, le=20, description="Most hits to return.")
    kind: str | None = Field(None, description="Only nodes of this kind (component, symbol, …).")


class NodeArgs(BaseModel):
    node_id: str = Field(description="A node id (interface:umd_kmd.free) or an unambiguous name.")


class NeighbourArgs(NodeArgs):
    edge_kinds: list[str] | None = Field(None, description="Only these edge kinds (calls, …).")
    direction: Literal["in", "out", "both"] = "both"
    limit: int = Field(20, ge=1, le=60)


class PathArgs(BaseModel):
    source: str = Field(description="Start node id or name.")
    target: str = Field(description="End node id or name.")


class LayersArgs(BaseModel):
    upper: str = Field(description="The upper (consuming) layer id.")
    lower: str = Field(description="The lower (providing) layer id.")


class FindingArgs(BaseModel):
    node_id: str | None = Field(None, description="Only findings on this node (all when empty).")


class RoleArgs(BaseModel):
    role: str = Field(description="A role id from the map's config (compiler, runtime, driver).")


class ExcerptArgs(BaseModel):
    path: str = Field(description="A repository path a tool returned as a citation.")
    line: int = Field(ge=1, description="The cited line.")
    context: int = Field(2, ge=0, le=8)
