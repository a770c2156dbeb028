"""Operator descriptors: what one operator implementation takes, gives, needs and lets be tuned.

A descriptor is data — a ``NAME.opdesc.json`` file (or ``.opdesc.yaml``) validated against the
published schema ``operator_descriptor.schema.json`` — loaded into a frozen
:class:`Descriptor`. :func:`load_descriptor` is the only way in: every violation is a
:class:`DescriptorError` naming the file, the JSON pointer of the offending value and what is
wrong, in one line. Beyond the schema it checks what JSON Schema cannot say: alignments are
powers of two, a tunable's default is one of its values, tensor names are unique, and the
kernel names an ABI the KMD has.
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from stack.kmd.kernels.ids import KernelId
from stack.kmd.opmod.errors import DescriptorError, UnknownOperatorError
from stack.kmd.opmod.version import SemVer

SCHEMA_ID = "refstack.operator-descriptor/1"
SUFFIXES = (".opdesc.json", ".opdesc.yaml")


class Feature(enum.StrEnum):
    """A hardware feature an operator may require."""

    FP16 = "fp16"
    BF16 = "bf16"
    FP64 = "fp64"
    INT8_DOT = "int8_dot"
    TENSOR_CORES = "tensor_cores"
    DOUBLE_ATOMICS = "double_atomics"


class PrecisionPolicy(enum.StrEnum):
    """The precision an operator can be asked to run at."""

    FP32 = "fp32"
    FP16 = "fp16"
    BF16 = "bf16"
    FP64 = "fp64"
    INT8 = "int8"
    ANY = "any"
    FP16_IF_SUPPORTED_ELSE_FP32 = "fp16_if_supported_else_fp32"

    def resolve(self, features: frozenset[Feature]) -> str | None:
        """The dtype this policy runs at on a device with ``features`` (None: unsatisfiable;
        "any": whatever the inputs are)."""
        if self is PrecisionPolicy.FP16_IF_SUPPORTED_ELSE_FP32:
            return "f16" if Feature.FP16 in features else "f32"
        dtype, needs = _POLICY_NEEDS[self]
        return dtype if needs is None or needs in features else None


_POLICY_NEEDS: dict[PrecisionPolicy, tuple[str, Feature | None]] = {
    PrecisionPolicy.FP32: ("f32", None),
    PrecisionPolicy.ANY: ("any", None),
    PrecisionPolicy.FP16: ("f16", Feature.FP16),
    PrecisionPolicy.BF16: ("bf16", Feature.BF16),
    PrecisionPolicy.FP64: ("f64", Feature.FP64),
    PrecisionPolicy.INT8: ("i8", Feature.INT8_DOT),
}


class NanInf(enum.StrEnum):
    """Whether NaN/Inf may appear in an operator's outputs."""

    PROPAGATE = "propagate"
    FORBIDDEN = "forbidden"


@dataclass(frozen=True, slots=True)
class TensorSpec:
    """One named input or output."""

    name: str
    dtypes: frozenset[str]
    layouts: tuple[str, ...]
    alignment: int
    rank: int | None
    optional: bool


@dataclass(frozen=True, slots=True)
class TunableParam:
    """A launch parameter the tuner may vary: its candidate values and its default."""

    name: str
    values: tuple[int, ...]
    default: int
    doc: str


@dataclass(frozen=True, slots=True)
class Descriptor:
    """A loaded, validated operator descriptor (see the module docstring)."""

    name: str
    kernel: str
    version: SemVer
    summary: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    requires: frozenset[Feature]
    precision_policies: tuple[PrecisionPolicy, ...]
    nan_inf: NanInf
    backends: frozenset[str]
    priority: int
    launch_template: str
    tunable: tuple[TunableParam, ...]
    module: str
    source: str

    @property
    def qualified_name(self) -> str:
        """``module/name@version``."""
        return f"{self.module}/{self.name}@{self.version}"

    def input(self, name: str) -> TensorSpec:
        """The input called ``name``; UnknownOperatorError listing the inputs otherwise."""
        return _spec(self, self.inputs, name, "input")

    def output(self, name: str) -> TensorSpec:
        """The output called ``name``; UnknownOperatorError listing the outputs otherwise."""
        return _spec(self, self.outputs, name, "output")

    def tunable_defaults(self) -> dict[str, int]:
        """Every tunable parameter at its default."""
        return {p.name: p.default for p in self.tunable}


def _spec(d: Descriptor, specs: tuple[TensorSpec, ...], name: str, kind: str) -> TensorSpec:
    for spec in specs:
        if spec.name == name:
            return spec
    known = tuple(s.name for s in specs)
    raise UnknownOperatorError(
        f"{d.qualified_name} has no {kind} {name!r}; known: {', '.join(known)}",
        name=name,
        known=known,
    )


@functools.cache
def descriptor_schema() -> dict[str, Any]:
    """The published JSON schema (draft 2020-12) every descriptor is validated against."""
    text = resources.files("stack.kmd.opmod").joinpath("operator_descriptor.schema.json")
    schema: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return schema


def _read(source: str | Path) -> tuple[Any, str]:
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DescriptorError(f"cannot read descriptor: {exc.strerror}", path=str(path)) from None
    try:
        data = yaml.safe_load(text) if path.suffix in (".yaml", ".yml") else json.loads(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise DescriptorError(
            f"not valid JSON/YAML: {exc}".splitlines()[0], path=str(path)
        ) from None
    return data, str(path)


def _pointer(parts: Any) -> str:
    return "".join(f"/{p}" for p in parts)


def validate_descriptor(data: Any, *, path: str = "<data>") -> None:
    """Raise DescriptorError for the first schema or semantic violation of ``data``."""
    validator = jsonschema.Draft202012Validator(descriptor_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(e.absolute_path), e.message))
    if errors:
        e = errors[0]
        where = _pointer(e.absolute_path)
        raise DescriptorError(f"{where or '/'}: {e.message}", path=path, pointer=where)
    for side in ("inputs", "outputs"):
        for i, spec in enumerate(data[side]):
            align = spec["alignment"]
            if align & (align - 1):
                where = f"/{side}/{i}/alignment"
                raise DescriptorError(
                    f"{where}: {align} is not a power of two", path=path, pointer=where
                )
    names = [s["name"] for s in data["inputs"] + data["outputs"]]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DescriptorError(
            f"/inputs: tensor names used twice: {', '.join(dup)}", path=path, pointer="/inputs"
        )
    for i, param in enumerate(data["launch"].get("tunable", ())):
        if param["default"] not in param["values"]:
            where = f"/launch/tunable/{i}/default"
            raise DescriptorError(
                f"{where}: default {param['default']} is not one of {param['values']}",
                path=path,
                pointer=where,
            )
    if data["kernel"] not in KernelId.__members__:
        known = ", ".join(KernelId.__members__)
        raise DescriptorError(
            f"/kernel: {data['kernel']!r} is not a kernel ABI of this KMD; known: {known}",
            path=path,
            pointer="/kernel",
        )


def load_descriptor(source: str | Path | Mapping[str, Any], *, module: str = "") -> Descriptor:
    """Read (a path) or take (a mapping) one descriptor, validate it, return the record."""
    if isinstance(source, Mapping):
        data: Any = dict(source)
        path = "<data>"
    else:
        data, path = _read(source)
    validate_descriptor(data, path=path)
    launch = data["launch"]
    return Descriptor(
        name=data["name"],
        kernel=data["kernel"],
        version=SemVer.parse(data["version"], path=path),
        summary=data.get("summary", ""),
        inputs=tuple(_tensor(t) for t in data["inputs"]),
        outputs=tuple(_tensor(t) for t in data["outputs"]),
        requires=frozenset(Feature(f) for f in data["requires"]),
        precision_policies=tuple(PrecisionPolicy(p) for p in data["precision_policies"]),
        nan_inf=NanInf(data.get("numerics", {}).get("nan_inf", "propagate")),
        backends=frozenset(data["backends"]),
        priority=int(data.get("priority", 0)),
        launch_template=launch["template"],
        tunable=tuple(
            TunableParam(p["name"], tuple(p["values"]), p["default"], p.get("doc", ""))
            for p in launch.get("tunable", ())
        ),
        module=module,
        source=path,
    )


def _tensor(t: Mapping[str, Any]) -> TensorSpec:
    return TensorSpec(
        name=t["name"],
        dtypes=frozenset(t["dtypes"]),
        layouts=tuple(t.get("layouts", ("any",))),
        alignment=int(t["alignment"]),
        rank=t.get("rank"),
        optional=bool(t.get("optional", False)),
    )


def descriptor_files(folder: Path) -> tuple[Path, ...]:
    """The descriptor files in ``folder``, sorted."""
    return tuple(sorted(p for p in folder.iterdir() if p.name.endswith(SUFFIXES)))
