"""Operator pipeline configs: loading and validation against the published schema.

A config (JSON or YAML, seed 004 §3.4) names the tensors a pipeline is given, its stages in
execution order — each an operator module consuming and producing named tensors under
constraints (stream affinity, memory alignment, precision policy) — and the tensors it returns.
:func:`load_config` validates it against ``pipeline.schema.json`` and then checks what a schema
cannot express: stage names unique, every input supplied or produced *upstream*, each tensor
produced once, every output produced, alignment a power of two ≥ 32, every supplied ``file`` a
``.npy`` of the declared shape and dtype (:func:`read_supplied`). Device-dependent checks
(operators known, precision satisfiable, shapes) are the linker's (:mod:`.link`).

Every refusal is a :class:`~stack.runtime.errors.PipelineConfigError` whose ``field`` is the JSON
path of the offending part and whose message starts with it. The typed records a loaded config
is made of are in :mod:`stack.runtime.oppipeline.records`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import yaml

from stack.runtime.errors import PipelineConfigError
from stack.runtime.oppipeline.records import (
    DEFAULT_ALIGNMENT,
    MIN_ALIGNMENT,
    Affinity,
    Attr,
    Constraints,
    Fallback,
    PipelineConfig,
    Shape,
    StageSpec,
    Supplied,
    TensorUse,
)
from stack.umd import DType

SCHEMA_ID = "refstack.pipeline/1"
MAX_CONFIG_BYTES = 1 << 20


@cache
def pipeline_schema() -> dict[str, Any]:
    """The published JSON schema (draft 2020-12) of pipeline configs."""
    text = resources.files(__package__).joinpath("pipeline.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def load_config(source: str | Path | Mapping[str, Any]) -> PipelineConfig:
    """Read (a path: ``.json``, ``.yaml``/``.yml``) and validate a config; see the module doc."""
    base: Path | None = None
    where: str | None = None
    if isinstance(source, Mapping):
        doc: Any = dict(source)
    else:
        path = Path(source)
        base, where = path.parent, str(path)
        doc = _read(path)
    _check_schema(doc, where)
    config = _build(doc, base, where)
    _check_dataflow(config)
    return config


def _read(path: Path) -> Any:
    with path.open("rb") as fh:
        raw = fh.read(MAX_CONFIG_BYTES + 1)
    if len(raw) > MAX_CONFIG_BYTES:
        raise PipelineConfigError(
            f"(file): larger than {MAX_CONFIG_BYTES} bytes", field="(file)", path=str(path)
        )
    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            return yaml.safe_load(raw)
        return json.loads(raw)
    except (ValueError, yaml.YAMLError) as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        line = line + 1 if line is not None else getattr(exc, "lineno", None)
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise PipelineConfigError(
            f"(file): not valid {'YAML' if path.suffix.lower() in ('.yaml', '.yml') else 'JSON'}: "
            f"{reason}",
            field="(file)", path=str(path), line=line,
        ) from None  # fmt: skip


def json_path(parts: Any) -> str:
    """``["pipeline", 1, "inputs", 0]`` → ``pipeline[1].inputs[0]`` (``(root)`` when empty)."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(root)"


def _check_schema(doc: Any, where: str | None) -> None:
    validator = jsonschema.Draft202012Validator(pipeline_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is not None:
        field = json_path(error.absolute_path)
        raise PipelineConfigError(f"{field}: {error.message}", field=field, path=where)


def _shape(value: Any) -> Shape | None:
    return None if value is None else tuple(value)


def _use(item: Any) -> TensorUse:
    if isinstance(item, str):
        return TensorUse(item)
    dtype = item.get("dtype")
    return TensorUse(
        item["name"], _shape(item.get("shape")), DType[dtype.upper()] if dtype else None
    )


def _build(doc: dict[str, Any], base: Path | None, where: str | None) -> PipelineConfig:
    supplied = []
    for name, spec in doc["inputs"].items():
        file = spec.get("file")
        sup = Supplied(
            name, tuple(spec["shape"]), DType[spec["dtype"].upper()],
            (base or Path.cwd()) / file if file else None,
        )  # fmt: skip
        if sup.file is not None:
            read_supplied(sup)  # the header only: a missing or mismatched file fails the check
        supplied.append(sup)
    stages = []
    for i, st in enumerate(doc["pipeline"]):
        c = st.get("constraints", {})
        constraints = Constraints(
            Affinity(c.get("stream_affinity", Affinity.SAME_AS_PREVIOUS)),
            c.get("memory_alignment", DEFAULT_ALIGNMENT),
            c.get("precision_policy"),
            c.get("nan_inf"),
        )
        attrs = tuple(sorted((k, _attr(v)) for k, v in st.get("attrs", {}).items()))
        fallback = Fallback(st["fallback"]) if "fallback" in st else None
        stages.append(
            StageSpec(
                i, st["name"], st["operator"], st.get("module"), st.get("version"),
                tuple(_use(u) for u in st["inputs"]), tuple(_use(u) for u in st["outputs"]),
                attrs, constraints, fallback,
            )
        )  # fmt: skip
    return PipelineConfig(
        doc.get("name", Path(where).stem if where else "pipeline"),
        tuple(supplied), tuple(stages), tuple(doc["outputs"]), where,
    )  # fmt: skip


def read_supplied(sup: Supplied) -> np.ndarray:
    """``sup.file`` as a read-only memory-mapped array of the declared shape and dtype.

    PipelineConfigError (field ``inputs.NAME.file``) when the file is missing or unreadable,
    not a single ``.npy`` array (pickled data, ``.npz``, a header claiming more than the file
    holds), or holds another shape or dtype than the config declares.
    """
    field = f"inputs.{sup.name}.file"
    if sup.file is None:
        raise PipelineConfigError(f"{field}: input {sup.name!r} has no file", field=field)
    try:
        mapped = np.load(sup.file, allow_pickle=False, mmap_mode="r")
    except (OSError, ValueError) as exc:
        reason = (exc.strerror if isinstance(exc, OSError) else None) or str(exc).splitlines()[0]
        raise PipelineConfigError(
            f"{field}: cannot read {sup.file} as a .npy array: {reason}",
            field=field, path=str(sup.file),
        ) from None  # fmt: skip
    if not isinstance(mapped, np.ndarray):
        raise PipelineConfigError(
            f"{field}: {sup.file} is not a single .npy array", field=field, path=str(sup.file)
        )
    if tuple(mapped.shape) != sup.shape or mapped.dtype != sup.dtype.numpy:
        raise PipelineConfigError(
            f"{field}: holds {list(mapped.shape)} {mapped.dtype}, the config declares "
            f"{list(sup.shape)} {sup.dtype.numpy}",
            field=field, path=str(sup.file),
        )  # fmt: skip
    return mapped


def _attr(value: Any) -> Attr:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, list):
        items = [int(v) if isinstance(v, bool) else v for v in value]
        if all(isinstance(v, int) for v in items):
            return tuple(items)
        return tuple(float(v) for v in items)
    return value


def _check_dataflow(config: PipelineConfig) -> None:
    """Names unique, inputs supplied or produced upstream, alignment, outputs produced."""
    producer: dict[str, str] = {s.name: "(input)" for s in config.inputs}
    later = {u.name: st for st in config.stages for u in st.outputs}
    seen: set[str] = set()
    for st in config.stages:
        if st.name in seen:
            raise PipelineConfigError(
                f"{st.field}.name: stage name {st.name!r} is used twice", field=f"{st.field}.name"
            )
        seen.add(st.name)
        align = st.constraints.memory_alignment
        if align < MIN_ALIGNMENT or align & (align - 1):
            field = f"{st.field}.constraints.memory_alignment"
            raise PipelineConfigError(
                f"{field}: {align} is not a power of two >= {MIN_ALIGNMENT}", field=field
            )
        for j, use in enumerate(st.inputs):
            if use.name not in producer:
                field = f"{st.field}.inputs[{j}]"
                if use.name in later:
                    why = f"it is produced downstream, by stage {later[use.name].name!r}"
                else:
                    known = ", ".join(sorted(producer)) or "none"
                    why = f"known tensors here: {known}"
                raise PipelineConfigError(
                    f"{field}: stage {st.name!r} input {use.name!r} is neither supplied nor "
                    f"produced upstream ({why})",
                    field=field,
                )
        for j, use in enumerate(st.outputs):
            if use.name in producer:
                field = f"{st.field}.outputs[{j}]"
                raise PipelineConfigError(
                    f"{field}: tensor {use.name!r} is already produced by {producer[use.name]}",
                    field=field,
                )
            producer[use.name] = f"stage {st.name!r}"
        if st.fallback is Fallback.IDENTITY and len(st.outputs) != 1:
            field = f"{st.field}.fallback"
            raise PipelineConfigError(
                f"{field}: identity needs exactly one output, stage {st.name!r} has "
                f"{len(st.outputs)}",
                field=field,
            )
    for i, name in enumerate(config.outputs):
        if name not in producer:
            raise PipelineConfigError(
                f"outputs[{i}]: {name!r} is neither supplied nor produced by a stage",
                field=f"outputs[{i}]",
            )
