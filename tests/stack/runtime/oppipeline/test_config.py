"""Pipeline configs: each schema or dataflow violation is refused with its field and message."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from stack.runtime.errors import PipelineConfigError
from stack.runtime.oppipeline import check_pipeline, load_config, pipeline_schema
from stack.runtime.oppipeline.records import Affinity, Fallback
from stack.umd import DType, Umd
from tests.stack.runtime.oppipeline.configs import BRANCH_MERGE, LINEAR, cfg


def _refusal(doc: Any) -> PipelineConfigError:
    with pytest.raises(PipelineConfigError) as e:
        load_config(doc)
    return e.value


def _stage(base: dict[str, Any], i: int, **patch: Any) -> dict[str, Any]:
    doc = cfg(base)
    doc["pipeline"][i].update(patch)
    return doc


def test_published_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(pipeline_schema())
    assert pipeline_schema()["properties"]["schema"] == {"const": "refstack.pipeline/1"}


def test_a_valid_config_becomes_typed_records() -> None:
    c = load_config(BRANCH_MERGE)
    assert [s.name for s in c.stages] == ["a", "b1", "b2", "m"]
    assert c.stages[2].constraints.stream_affinity is Affinity.ASYNC_PRELOAD
    assert c.stages[0].constraints.memory_alignment == 64
    assert c.supplied("k") is not None and c.supplied("k").dtype is DType.F32  # type: ignore[union-attr]
    assert c.outputs == ("y",)


@pytest.mark.parametrize(
    ("doc", "field", "message"),
    [
        (
            {k: v for k, v in LINEAR.items() if k != "outputs"},
            "(root)",
            "(root): 'outputs' is a required property",
        ),
        (cfg(LINEAR, schema="pipelink/2"), "schema", "schema: 'refstack.pipeline/1' was expected"),
        (
            _stage(LINEAR, 0, library="libconv.so"),
            "pipeline[0]",
            "pipeline[0]: Additional properties are not allowed ('library' was unexpected)",
        ),
        (
            _stage(LINEAR, 1, constraints={"memory_alignment": "64"}),
            "pipeline[1].constraints.memory_alignment",
            "pipeline[1].constraints.memory_alignment: '64' is not of type 'integer'",
        ),
        (
            _stage(LINEAR, 1, constraints={"stream_affinity": "any"}),
            "pipeline[1].constraints.stream_affinity",
            "pipeline[1].constraints.stream_affinity: 'any' is not one of "
            "['same_as_previous', 'async_preload']",
        ),
        (
            _stage(LINEAR, 0, inputs=[]),
            "pipeline[0].inputs",
            "pipeline[0].inputs: [] should be non-empty",
        ),
    ],
)
def test_schema_violations(doc: dict[str, Any], field: str, message: str) -> None:
    err = _refusal(doc)
    assert (err.field, err.message) == (field, message)


@pytest.mark.parametrize("align", [48, 16, 0, 100])
def test_alignment_must_be_a_power_of_two_of_at_least_32(align: int) -> None:
    err = _refusal(_stage(LINEAR, 1, constraints={"memory_alignment": align}))
    assert err.field == "pipeline[1].constraints.memory_alignment"
    assert err.message == (
        f"pipeline[1].constraints.memory_alignment: {align} is not a power of two >= 32"
        if align >= 1
        else "pipeline[1].constraints.memory_alignment: 0 is less than the minimum of 1"
    )


def test_an_input_nobody_produces_is_refused_listing_known_tensors() -> None:
    err = _refusal(_stage(LINEAR, 1, inputs=["c", "z"]))
    assert err.field == "pipeline[1].inputs[1]"
    assert err.message == (
        "pipeline[1].inputs[1]: stage 'act' input 'z' is neither supplied nor produced "
        "upstream (known tensors here: c, w, x)"
    )


def test_an_input_produced_downstream_is_refused_naming_the_producer() -> None:
    doc = cfg(BRANCH_MERGE)
    doc["pipeline"][0], doc["pipeline"][1] = doc["pipeline"][1], doc["pipeline"][0]
    err = _refusal(doc)
    assert err.field == "pipeline[0].inputs[0]"
    assert err.message == (
        "pipeline[0].inputs[0]: stage 'b1' input 't' is neither supplied nor produced "
        "upstream (it is produced downstream, by stage 'a')"
    )


def test_a_tensor_produced_twice_is_refused() -> None:
    err = _refusal(_stage(BRANCH_MERGE, 2, outputs=["u"]))
    assert (err.field, err.message) == (
        "pipeline[2].outputs[0]",
        "pipeline[2].outputs[0]: tensor 'u' is already produced by stage 'b1'",
    )
    err = _refusal(_stage(BRANCH_MERGE, 0, outputs=["x"]))
    assert err.message == "pipeline[0].outputs[0]: tensor 'x' is already produced by (input)"


def test_duplicate_stage_names_and_unproduced_outputs_are_refused() -> None:
    err = _refusal(_stage(BRANCH_MERGE, 3, name="a"))
    assert err.message == "pipeline[3].name: stage name 'a' is used twice"
    err = _refusal(cfg(BRANCH_MERGE, outputs=["y", "q"]))
    assert (err.field, err.message) == (
        "outputs[1]",
        "outputs[1]: 'q' is neither supplied nor produced by a stage",
    )


def test_identity_fallback_needs_one_output() -> None:
    doc = _stage(LINEAR, 1, fallback="identity", outputs=["y", "y2"])
    err = _refusal(doc)
    assert err.message == (
        "pipeline[1].fallback: identity needs exactly one output, stage 'act' has 2"
    )
    stage = load_config(_stage(LINEAR, 1, fallback="identity")).stages[1]
    assert stage.fallback is Fallback.IDENTITY


def test_precision_policy_must_be_satisfiable_on_this_device(umd: Umd) -> None:
    doc = _stage(LINEAR, 1, constraints={"precision_policy": "bf16"})  # relu offers any
    with pytest.raises(PipelineConfigError) as e:
        check_pipeline(doc, umd)
    assert e.value.field == "pipeline[1].constraints.precision_policy"
    assert e.value.message == (
        "pipeline[1].constraints.precision_policy: bf16 is not satisfiable on the numpy:cpu "
        "device (it satisfies fp32, fp16, fp64, int8, fp16_if_supported_else_fp32)"
    )


def test_precision_policy_must_be_offered_by_the_operator(umd: Umd) -> None:
    doc = _stage(LINEAR, 0, constraints={"precision_policy": "int8"})
    with pytest.raises(PipelineConfigError) as e:
        check_pipeline(doc, umd)
    assert e.value.message == (
        "pipeline[0].constraints.precision_policy: operator builtin/conv2d@1.0.0 does not offer "
        "int8 (offers: fp32, fp16, fp64, fp16_if_supported_else_fp32)"
    )


def test_unknown_operator_and_module_list_known_ones(umd: Umd) -> None:
    with pytest.raises(PipelineConfigError) as e:
        check_pipeline(_stage(LINEAR, 1, operator="silu_activation"), umd)
    assert e.value.field == "pipeline[1].operator"
    assert e.value.message.startswith(
        "pipeline[1].operator: no operator descriptor 'silu_activation'; known: add, affine_grid,"
    )
    with pytest.raises(PipelineConfigError) as e:
        check_pipeline(_stage(LINEAR, 1, module="libactivation"), umd)
    assert (e.value.field, e.value.message) == (
        "pipeline[1].module",
        "pipeline[1].module: no operator module 'libactivation'; loaded: builtin",
    )


def test_kernel_names_resolve_to_the_descriptor_the_device_runs(umd: Umd) -> None:
    linked = check_pipeline(_stage(LINEAR, 1, operator="RELU", module="builtin"), umd)
    assert linked.stages[1].operator.qualified_name == "builtin/relu@1.0.0"


def test_version_rule_major_refused_minor_warned_patch_silent(
    umd: Umd, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(PipelineConfigError) as e:
        check_pipeline(_stage(LINEAR, 1, version="2.0.0"), umd)
    assert (e.value.field, e.value.message) == (
        "pipeline[1].version",
        "pipeline[1].version: stage for operator builtin/relu@1.0.0 has version 2.0.0, this "
        "stack supports 1.x: refused",
    )
    with caplog.at_level(logging.WARNING, logger="stack.kmd.opmod"):
        check_pipeline(_stage(LINEAR, 1, version="1.0.7"), umd)
        assert caplog.records == []
        check_pipeline(_stage(LINEAR, 1, version="1.3.0"), umd)
    assert [r.getMessage() for r in caplog.records] == [
        "pipeline[1].version: stage for operator builtin/relu@1.0.0 has version 1.3.0, this "
        "stack supports 1.0.0: loaded (minor versions differ)"
    ]


def test_yaml_and_json_files_load_alike(tmp_path: Path) -> None:
    import yaml

    (tmp_path / "p.yaml").write_text(yaml.safe_dump(LINEAR))
    (tmp_path / "p.json").write_text(json.dumps(LINEAR))
    a, b = load_config(tmp_path / "p.yaml"), load_config(tmp_path / "p.json")
    assert a.stages == b.stages and a.source == str(tmp_path / "p.yaml")


def test_unparsable_files_name_the_line(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("schema: refstack.pipeline/1\ninputs: [x\n")
    err = _refusal(tmp_path / "bad.yaml")
    assert (err.field, err.line, err.path) == ("(file)", 3, str(tmp_path / "bad.yaml"))
    assert err.message.startswith("(file): not valid YAML: ")
