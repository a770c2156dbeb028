"""Operator pipelines (seed 004 §3.4–3.5): configs of chained operator modules, their linker,
and a runner on a UMD session with a binned memory pool and error isolation.

``load_config`` → :class:`PipelineConfig` (schema and dataflow checked) → ``link`` →
:class:`LinkedPipeline` (operators, precisions and shapes bound) → :class:`PipelineRunner`.
:func:`open_pipeline` does all three on a new session of a UMD.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stack.runtime.oppipeline.buffers import BufferAction, BufferEvent
from stack.runtime.oppipeline.config import load_config, pipeline_schema
from stack.runtime.oppipeline.link import Connection, LinkedPipeline, PipelineTensor, link
from stack.runtime.oppipeline.records import PipelineConfig
from stack.runtime.oppipeline.runner import PipelineResult, PipelineRunner, RunReport
from stack.umd import Umd

ConfigSource = PipelineConfig | str | Path | Mapping[str, Any]


def check_pipeline(config: ConfigSource, umd: Umd) -> LinkedPipeline:
    """Load, validate and link ``config`` against ``umd``'s device (sync; no device memory)."""
    cfg = config if isinstance(config, PipelineConfig) else load_config(config)
    session = umd.create_session()
    try:
        return link(cfg, session, umd)
    finally:
        session.close()


def open_pipeline(config: ConfigSource, umd: Umd) -> PipelineRunner:
    """A runner for ``config`` on a new session of ``umd`` (closed by ``runner.close()``)."""
    cfg = config if isinstance(config, PipelineConfig) else load_config(config)
    session = umd.create_session()
    try:
        return PipelineRunner(link(cfg, session, umd), session)
    except BaseException:
        session.close()
        raise


__all__ = [
    "BufferAction",
    "BufferEvent",
    "ConfigSource",
    "Connection",
    "LinkedPipeline",
    "PipelineConfig",
    "PipelineResult",
    "PipelineRunner",
    "PipelineTensor",
    "RunReport",
    "check_pipeline",
    "link",
    "load_config",
    "open_pipeline",
    "pipeline_schema",
]
