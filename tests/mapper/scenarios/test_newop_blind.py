"""Today's new-op predictor run blind on the reference stack: ConvTranspose like conv2d on a
clean checkout of the commit before ConvTranspose landed (139a09f), scored on that commit."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from mapper.scenarios.newop_at import predict_at

REPO = Path(__file__).resolve().parents[3]
LANDED = "139a09f"


def _has(rev: str) -> bool:
    proc = subprocess.run(
        ["git", "-C", str(REPO), "cat-file", "-e", f"{rev}^^{{commit}}"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    return proc.returncode == 0


@pytest.fixture(scope="module")
def blind() -> dict[str, Any]:
    if not _has(LANDED):
        pytest.skip(f"{LANDED} and its parent are not in this clone (a shallow one)")
    return predict_at(REPO, "ConvTranspose", LANDED, like="conv2d")


def _points(result: dict[str, Any]) -> list[dict[str, Any]]:
    prediction = result["prediction"]
    return [p for plan in prediction["layers"] for p in plan["points"]] + prediction[
        "outside_layers"
    ]


def test_a_module_devoted_to_the_similar_op_gets_a_sibling_and_its_lists(
    blind: dict[str, Any],
) -> None:
    by_path = {(p["kind"], p["path"]) for p in _points(blind)}
    assert {
        ("implementation", "stack/kmd/kernels/conv_transpose.py"),
        ("implementation", "stack/umd/translators/conv_transpose.py"),
        ("implementation", "stack/kmd/opmod/builtin/conv_transpose.opdesc.json"),
        ("registration", "stack/kmd/kernels/numpy_backend.py"),
        ("registration", "stack/umd/translators/__init__.py"),
    } <= by_path
    assert {
        "stack/kmd/kernels/conv_transpose.py",
        "stack/umd/translators/conv_transpose.py",
        "stack/kmd/kernels/numpy_backend.py",
        "stack/umd/translators/__init__.py",
    } <= set(blind["files"]["hits"])


def test_lists_of_every_op_are_predicted_and_code_about_a_few_ops_is_not(
    blind: dict[str, Any],
) -> None:
    listed = {  # the op-list points, each saying how many ops its text names
        p["path"]
        for p in _points(blind)
        if p["kind"] in ("doc", "contract") and p["why"][0]["detail"].startswith("names ")
    }
    assert listed == {
        "knowledge_base/kmd/kernels.md",
        "knowledge_base/umd/translators.md",
        "knowledge_base/adapter/op_importers.md",
        "knowledge_base/compiler/passes.md",  # its pass table names 13 ops: over-predicted
        # it names four of the five newest ops; the change updated its conformance figures
        # without naming ConvTranspose: over-predicted
        "knowledge_base/adapter/onnx_backend.md",
        "contracts/runtime_umd.yaml",
    }
    predicted = set(blind["prediction"]["files"])
    for peculiar in (  # fusion, layout and quantization rules name Conv among a few ops
        "stack/compiler/passes/fuse.py",
        "stack/compiler/passes/layout.py",
        "stack/compiler/quantize.py",
        "stack/umd/tuner.py",
    ):
        assert peculiar not in predicted


def test_string_tables_generated_stub_and_test_lists_are_predicted(blind: dict[str, Any]) -> None:
    """Places the map's names alone do not show: the op table spelt as strings, protoc's stub
    beside the proto, a test's list of translator families and a test's table of requests,
    each named by the definition that gains the row."""
    got = {(p["kind"], p["path"], p["predicted"]) for p in _points(blind)}
    assert {
        ("use", "stack/kmd/kernels/op_table.py", "stack.kmd.kernels.op_table.ROWS"),
        (
            "use",
            "tests/stack/umd/test_registry.py",
            "tests.stack.umd.test_registry.test_every_op_kind_is_routed",
        ),
        ("use", "tests/stack/umd/test_translators.py", "tests.stack.umd.test_translators.CASES"),
        (
            "generated",
            "stack/umd/service/umd_pb2.pyi",
            "stack.umd.service.umd_pb2.OP_CONVTRANSPOSE",
        ),
        (
            "generated",
            "stack/umd/service/umd_pb2.pyi",
            "stack.umd.service.umd_pb2.OpType.OP_CONVTRANSPOSE",
        ),
        ("use", "stack/runtime/opcodes.py", "stack.runtime.opcodes.UMD_OPS"),
        ("use", "stack/kmd/kernels/numpy_backend.py", "stack.kmd.kernels.numpy_backend.GENERIC"),
    } <= got
    # every file that existed is predicted but shape_rules.py: at 298 lines it had no room
    # under module_lines (300), so the conv rule's counterpart is predicted in a module of its
    # own; the change took it to 375 lines, and 96f4737 split it
    assert blind["existing_files"]["missed"] == ["stack/compiler/shape_rules.py"]


def test_without_like_the_similar_op_is_chosen_by_shape() -> None:
    if not _has(LANDED):
        pytest.skip(f"{LANDED} and its parent are not in this clone (a shallow one)")
    result = predict_at(REPO, "ConvTranspose", LANDED)
    candidates = [c["op"] for c in result["prediction"]["candidates"]]
    assert result["like"] == "conv2d"
    assert candidates.index("conv2d") < candidates.index("transpose")
