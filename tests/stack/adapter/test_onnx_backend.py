"""The ONNX backend on the stack: the official node tests for the supported ops, and the API."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from stack.adapter import UnsupportedOpError
from stack.adapter.conformance import EXCLUSIONS, node_cases, run_conformance
from stack.adapter.onnx_backend import StackBackend


@pytest.mark.slow
def test_every_node_test_is_accounted_for_and_none_fails() -> None:
    """All node tests of the installed onnx: each exactly once; failed 0; passed = selected -
    unsupported; every refusal typed with a counted reason; the goal: half of all tests pass."""
    report = run_conformance()
    summary = report.to_dict()
    assert summary["total"] == len(node_cases())
    assert summary["failed"] == 0, summary["failures"]
    assert summary["passed"] == summary["selected"] - summary["unsupported"]
    assert summary["selected"] == summary["total"] - summary["excluded"]
    assert sum(summary["unsupported_reasons"].values()) == summary["unsupported"]
    assert sum(summary["exclusion_reasons"].values()) == summary["excluded"]
    assert all(reason for reason in summary["unsupported_reasons"])
    assert summary["passed"] >= summary["total"] / 2, summary["unsupported_reasons"]


def test_every_exclusion_pattern_is_used_and_explained() -> None:
    import re

    names = [c.name for c in node_cases()]
    for pattern, reason in EXCLUSIONS:
        assert reason.strip()
        assert any(re.search(pattern, n) for n in names), pattern


def _model(op: str, shape: list[int]):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], name="n0")], "g", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_prepare_refuses_unsupported_ops_with_the_typed_error() -> None:
    with pytest.raises(UnsupportedOpError) as err:
        StackBackend.prepare(_model("Unique", [3, 3]))
    assert err.value.op_type == "Unique" and err.value.node == "n0"


def test_backend_compiles_once_per_input_signature() -> None:
    rep = StackBackend.prepare(_model("Relu", ["n"]))
    try:
        a = np.array([-1.0, 2.0], np.float32)
        b = np.array([[-3.0], [4.0], [-5.0]], np.float32).ravel()
        np.testing.assert_array_equal(rep.run([a])[0], np.maximum(a, 0))
        np.testing.assert_array_equal(rep.run([b])[0], np.maximum(b, 0))
        np.testing.assert_array_equal(rep.run([a * 2])[0], np.maximum(a * 2, 0))
        assert len(rep._cache) == 2
    finally:
        rep.close()


def test_conformance_cli_prints_counts_and_reasons() -> None:
    import json
    import subprocess
    import sys
    from pathlib import Path

    refstack = Path(sys.executable).parent / "refstack"
    result = subprocess.run(
        [
            str(refstack),
            "conformance",
            "--json",
            "--filter",
            "^test_(relu|maxpool_with_argmax_2d_precomputed_pads|add_uint16|unique_not_sorted_without_axis)$",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    counts = tuple(report[k] for k in ("total", "passed", "failed", "unsupported", "excluded"))
    assert counts == (4, 1, 0, 2, 1)
    assert report["exclusions"] == [
        {"test": "test_add_uint16", "reason": "element type UINT16: no device DType"}
    ]
    assert report["unsupported_reasons"] == {
        "no importer for Unique": 1,
        "UnsupportedOpError (MaxPool)": 1,
    }
    assert "the Indices output" in next(
        u["message"]
        for u in report["unsupported_cases"]
        if u["test"] == "test_maxpool_with_argmax_2d_precomputed_pads"
    )


def test_run_node_runs_a_single_node_through_the_stack() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    node = helper.make_node("Gemm", ["a", "b"], ["y"], transB=1, alpha=0.5)
    (y,) = StackBackend.run_node(node, [a, b])
    np.testing.assert_allclose(y, 0.5 * a @ b.T, rtol=1e-5, atol=1e-6)
