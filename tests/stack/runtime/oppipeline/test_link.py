"""The linker: shapes inferred and checked, mismatch reports, branch and merge connections."""

from __future__ import annotations

from typing import Any

import pytest

from stack.runtime.errors import PipelineConfigError, ShapeMismatchError
from stack.runtime.oppipeline import Connection, check_pipeline
from stack.runtime.oppipeline.link import first_mismatch
from stack.umd import DType, Umd
from tests.stack.runtime.oppipeline.configs import BRANCH_MERGE, LINEAR, cfg


def _stage(base: dict[str, Any], i: int, **patch: Any) -> dict[str, Any]:
    doc = cfg(base)
    doc["pipeline"][i].update(patch)
    return doc


def test_shapes_are_inferred_through_the_umd(umd: Umd) -> None:
    linked = check_pipeline(LINEAR, umd)
    assert linked.tensors["c"].shape == (1, 4, 8, 8)
    assert linked.tensors["y"].shape == (1, 4, 8, 8)
    assert [s.operator.qualified_name for s in linked.stages] == [
        "builtin/conv2d@1.0.0",
        "builtin/relu@1.0.0",
    ]


def test_a_mismatch_names_both_shapes_and_the_dimension(umd: Umd) -> None:
    doc = _stage(LINEAR, 1, inputs=[{"name": "c", "shape": [1, 4, 4, 4]}])
    with pytest.raises(ShapeMismatchError) as e:
        check_pipeline(doc, umd)
    err = e.value
    assert err.message == (
        "pipeline[1].inputs[0]: shape mismatch at stage 'act': c (produced by stage 'conv') is "
        "[1, 4, 8, 8], the stage expects [1, 4, 4, 4]: dimension 2 is 8, expected 4"
    )
    assert (err.field, err.stage, err.tensor, err.dim) == ("pipeline[1].inputs[0]", "act", "c", 2)
    assert (err.produced, err.expected) == ((1, 4, 8, 8), (1, 4, 4, 4))
    assert err.to_dict()["produced"] == [1, 4, 8, 8]


def test_wildcards_match_and_a_rank_difference_is_reported(umd: Umd) -> None:
    check_pipeline(_stage(LINEAR, 1, inputs=[{"name": "c", "shape": [None, 4, None, 8]}]), umd)
    with pytest.raises(ShapeMismatchError) as e:
        check_pipeline(_stage(LINEAR, 1, inputs=[{"name": "c", "shape": [4, 8, 8]}]), umd)
    assert e.value.message.endswith("dimension 0 is 1, expected 4")
    with pytest.raises(ShapeMismatchError) as e:
        check_pipeline(_stage(LINEAR, 1, outputs=[{"name": "y", "shape": [1, 4, 8]}]), umd)
    assert e.value.message == (
        "pipeline[1].outputs[0]: shape mismatch at stage 'act': y (inferred) is [1, 4, 8, 8], "
        "the stage expects [1, 4, 8]: rank is 4, expected 3"
    )
    assert e.value.dim == 3


def test_first_mismatch() -> None:
    assert first_mismatch((1, 64, 112, 112), (1, 64, 56, 56)) == 2
    assert first_mismatch((1, 64), (None, 64)) is None
    assert first_mismatch((2, 3), (2, 3, 1)) == 2


def test_a_merge_that_cannot_broadcast_is_refused(umd: Umd) -> None:
    doc = cfg(BRANCH_MERGE)
    doc["inputs"]["k"]["shape"] = [5, 1]
    with pytest.raises(ShapeMismatchError) as e:
        check_pipeline(doc, umd)
    assert e.value.message == (
        "pipeline[1].inputs[1]: merge at stage 'b1' cannot broadcast t [2, 4, 3] with k [5, 1]: "
        "dimension 1 is 4 vs 5"
    )
    assert (e.value.dim, e.value.produced, e.value.expected) == (1, (5, 1), (2, 4, 3))


def test_an_op_that_refuses_its_inputs_is_reported_with_them(umd: Umd) -> None:
    doc = cfg(
        LINEAR,
        inputs={"a": {"shape": [2, 3], "dtype": "f32"}, "b": {"shape": [4, 5], "dtype": "f32"}},
        pipeline=[{"name": "fc", "operator": "matmul", "inputs": ["a", "b"], "outputs": ["y"]}],
    )
    with pytest.raises(PipelineConfigError) as e:
        check_pipeline(doc, umd)
    assert e.value.message == (
        "pipeline[0]: stage 'fc' (builtin/matmul@1.0.0) cannot take a [2, 3] f32, b [4, 5] f32: "
        "inner dims differ: (2, 3) @ (4, 5) (inputs[1].shape)"
    )


def test_branch_and_merge_connections_and_reference_counts(umd: Umd) -> None:
    linked = check_pipeline(BRANCH_MERGE, umd)
    t = linked.tensors["t"]
    assert (t.producer, t.consumers, t.refs) == ("a", ("b1", "b2"), 2)
    assert linked.tensors["y"].refs == 1 and linked.tensors["y"].returned
    kinds = {s.spec.name: s.connection for s in linked.stages}
    assert kinds == {
        "a": Connection.LINEAR,
        "b1": Connection.MERGE,  # t (from a) with k (supplied): broadcast
        "b2": Connection.LINEAR,
        "m": Connection.MERGE,
    }
    assert [s.stream for s in linked.stages] == [0, 0, 1, 1]
    summary = linked.summary()
    assert [x["connection"] for x in summary["tensors"]] == [None, None, "branch", None, None, None]


def test_precision_policy_sets_the_stage_dtype(umd: Umd) -> None:
    doc = _stage(LINEAR, 1, constraints={"precision_policy": "fp16_if_supported_else_fp32"})
    linked = check_pipeline(doc, umd)
    assert linked.stages[1].dtype is DType.F16
    assert linked.tensors["y"].dtype is DType.F16


def test_identity_fallback_needs_matching_shapes(umd: Umd) -> None:
    with pytest.raises(PipelineConfigError) as e:
        check_pipeline(_stage(LINEAR, 0, fallback="identity"), umd)
    assert e.value.message == (
        "pipeline[0].fallback: identity cannot stand in for stage 'conv': its first input is "
        "[1, 3, 8, 8] f32, its output [1, 4, 8, 8] f32"
    )
