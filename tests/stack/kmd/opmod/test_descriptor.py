"""Descriptors: the built-in ones load and agree with the kernel ABIs; every kind of schema
violation is refused with its message and the JSON pointer of the offending value."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stack.kmd.kernels.abi import ABIS
from stack.kmd.kernels.ids import KernelId
from stack.kmd.opmod import (
    DescriptorError,
    Feature,
    NanInf,
    UnknownOperatorError,
    descriptor_schema,
    load_descriptor,
)
from stack.kmd.opmod.builtin import folder, module

GOOD: dict[str, Any] = {
    "schema": "refstack.operator-descriptor/1",
    "name": "gemm_fast",
    "kernel": "GEMM",
    "version": "1.2.3",
    "inputs": [
        {"name": "A", "dtypes": ["f32"], "layouts": ["row_major"], "alignment": 64, "rank": 2},
        {"name": "B", "dtypes": ["f32"], "alignment": 64},
    ],
    "outputs": [{"name": "Y", "dtypes": ["f32"], "alignment": 64}],
    "requires": ["fp16"],
    "precision_policies": ["fp32"],
    "numerics": {"nan_inf": "forbidden"},
    "backends": ["numpy"],
    "launch": {"template": "tiled", "tunable": [{"name": "split", "values": [1, 2], "default": 1}]},
}


def test_a_good_descriptor_loads_into_its_record() -> None:
    d = load_descriptor(GOOD, module="m")
    assert (d.name, d.kernel, str(d.version), d.qualified_name) == (
        "gemm_fast", "GEMM", "1.2.3", "m/gemm_fast@1.2.3",
    )  # fmt: skip
    assert d.input("A").layouts == ("row_major",) and d.input("A").rank == 2
    assert d.input("B").layouts == ("any",) and d.input("B").rank is None
    assert d.requires == frozenset({Feature.FP16}) and d.nan_inf is NanInf.FORBIDDEN
    assert d.tunable_defaults() == {"split": 1}
    with pytest.raises(UnknownOperatorError, match=r"has no input 'C'; known: A, B"):
        d.input("C")


def _mutated(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(GOOD)
    change(data)
    return data


VIOLATIONS = [
    ("missing field", lambda d: d.pop("kernel"), "", "/: 'kernel' is a required property"),
    (
        "unknown field",
        lambda d: d.update(colour="red"),
        "",
        "/: Additional properties are not allowed ('colour' was unexpected)",
    ),
    (
        "wrong schema id",
        lambda d: d.update(schema="other/2"),
        "/schema",
        "/schema: 'refstack.operator-descriptor/1' was expected",
    ),
    (
        "bad name",
        lambda d: d.update(name="Gemm-Fast"),
        "/name",
        "/name: 'Gemm-Fast' does not match '^[a-z][a-z0-9_]{0,63}$'",
    ),
    (
        "bad version",
        lambda d: d.update(version="1.2"),
        "/version",
        "/version: '1.2' does not match",
    ),
    (
        "unknown dtype",
        lambda d: d["inputs"][0].update(dtypes=["f8"]),
        "/inputs/0/dtypes/0",
        "/inputs/0/dtypes/0: 'f8' is not one of",
    ),
    (
        "unknown layout",
        lambda d: d["inputs"][0].update(layouts=["nwhc"]),
        "/inputs/0/layouts/0",
        "/inputs/0/layouts/0: 'nwhc' is not one of",
    ),
    (
        "alignment not an integer",
        lambda d: d["outputs"][0].update(alignment="64"),
        "/outputs/0/alignment",
        "/outputs/0/alignment: '64' is not of type 'integer'",
    ),
    (
        "alignment not a power of two",
        lambda d: d["inputs"][1].update(alignment=48),
        "/inputs/1/alignment",
        "/inputs/1/alignment: 48 is not a power of two",
    ),
    (
        "unknown feature",
        lambda d: d.update(requires=["warp_magic"]),
        "/requires/0",
        "/requires/0: 'warp_magic' is not one of",
    ),
    (
        "unknown precision policy",
        lambda d: d.update(precision_policies=["fp8"]),
        "/precision_policies/0",
        "/precision_policies/0: 'fp8' is not one of",
    ),
    (
        "no backend",
        lambda d: d.update(backends=[]),
        "/backends",
        "/backends: [] should be non-empty",
    ),
    (
        "unknown launch template",
        lambda d: d["launch"].update(template="warp"),
        "/launch/template",
        "/launch/template: 'warp' is not one of",
    ),
    (
        "tunable default not a value",
        lambda d: d["launch"]["tunable"][0].update(default=3),
        "/launch/tunable/0/default",
        "/launch/tunable/0/default: default 3 is not one of [1, 2]",
    ),
    (
        "duplicate tensor name",
        lambda d: d["outputs"][0].update(name="A"),
        "/inputs",
        "/inputs: tensor names used twice: A",
    ),
    (
        "unknown kernel",
        lambda d: d.update(kernel="WARP_GEMM"),
        "/kernel",
        "/kernel: 'WARP_GEMM' is not a kernel ABI of this KMD; known: GEMM, MATMUL",
    ),
]


@pytest.mark.parametrize(
    ("change", "pointer", "message"),
    [v[1:] for v in VIOLATIONS],
    ids=[v[0] for v in VIOLATIONS],
)
def test_each_schema_violation_is_refused_with_its_message(
    change: Any, pointer: str, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "bad.opdesc.json"
    path.write_text(json.dumps(_mutated(change)))
    with pytest.raises(DescriptorError) as info:
        load_descriptor(path)
    assert info.value.pointer == pointer
    assert info.value.path == str(path)
    assert info.value.message.startswith(message), info.value.message
    assert "\n" not in info.value.message


def test_unreadable_and_unparsable_files_are_descriptor_errors(tmp_path: Path) -> None:
    with pytest.raises(DescriptorError, match="cannot read descriptor"):
        load_descriptor(tmp_path / "absent.opdesc.json")
    bad = tmp_path / "x.opdesc.json"
    bad.write_text("{not json")
    with pytest.raises(DescriptorError, match="not valid JSON/YAML"):
        load_descriptor(bad)


def test_a_yaml_descriptor_loads_like_json(tmp_path: Path) -> None:
    import dataclasses

    import yaml

    path = tmp_path / "g.opdesc.yaml"
    path.write_text(yaml.safe_dump(GOOD))
    loaded = load_descriptor(path)
    assert loaded.source == str(path)
    assert dataclasses.replace(loaded, source="<data>") == load_descriptor(GOOD)


def test_the_builtin_module_describes_every_kernel_as_its_abi_does() -> None:
    descs = {d.kernel: d for d in module().descriptors}
    assert sorted(descs) == sorted(k.name for k in KernelId)
    assert len(list(folder().glob("*.opdesc.json"))) == len(KernelId)
    for kid, abi in ABIS.items():
        d = descs[kid.name]
        assert d.name == kid.name.lower() and d.module == "builtin"
        assert tuple(t.name for t in d.inputs) == abi.inputs + abi.optional
        assert tuple(t.name for t in d.inputs if t.optional) == abi.optional
        assert tuple(t.name for t in d.outputs) == abi.outputs
        assert d.backends == frozenset({"numpy", "cupy"})


def test_the_schema_is_published_draft_2020_12() -> None:
    schema = descriptor_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["schema"] == {"const": "refstack.operator-descriptor/1"}
