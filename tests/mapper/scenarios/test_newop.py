"""``scenario new-op``: change points from the footprint of the most similar op."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mapper.errors import UnknownNameError
from mapper.impact import MapView
from mapper.scenarios.newop import walk_new_op
from mapper.scenarios.records import NewOpWalk

STACKMAP = Path(sys.executable).parent / "stackmap"


def points(walk: NewOpWalk) -> set[tuple[str, str | None, str, str]]:
    return {(p.kind.value, p.layer, p.like, p.predicted) for p in walk.points}


def test_toy_stack_with_a_hole_in_the_middle(toy_view: MapView) -> None:
    walk = walk_new_op(toy_view, "gelu")
    assert walk.like == "relu"
    # spelling: characters 0.75, words 0 (gelu, relu); shape 2/3: ONNX Gelu has Relu's input
    # and output, and an attribute more
    assert walk.candidates[0] == ("relu", ((0.75 + 0) / 2 + 2 / 3) / 2)
    assert points(walk) == {
        (
            "implementation",
            "front",
            "symbol:toy.front.ops.import_relu",
            "toy.front.ops.import_gelu",
        ),
        ("vocabulary", "front", "symbol:toy.front.ops.OpType.RELU", "toy.front.ops.OpType.GELU"),
        ("implementation", "back", "symbol:toy.back.kernels.relu", "toy.back.kernels.gelu"),
        (
            "vocabulary",
            "back",
            "symbol:toy.back.kernels.KernelId.RELU",
            "toy.back.kernels.KernelId.GELU",
        ),
        (
            "test",
            None,
            "test:tests/test_kernels.py::test_relu_clamps",
            "tests.test_kernels.test_gelu_clamps",
        ),
        ("doc", None, "symbol:toy.back.kernels.relu", "doc:docs/back.md#back-end-kernels"),
    }
    mid = next(plan for plan in walk.layers if plan.layer == "mid")
    assert mid.points == ()
    assert mid.no_change == (
        "no change: none of the 7 definitions of mid is spelt after relu or holds one of its "
        "vocabulary values; the op crosses mid through interface:front_mid.toy.mid.plan.plan, "
        "interface:mid_back.toy.back.kernels.launch unchanged"
    )
    for point in walk.points:
        assert point.why and point.why[0].path == point.path, point
    assert walk.files() == [
        "docs/back.md",
        "tests/test_kernels.py",
        "toy/back/kernels.py",
        "toy/front/ops.py",
    ]


def test_like_must_be_a_known_op(toy_view: MapView) -> None:
    with pytest.raises(UnknownNameError) as err:
        walk_new_op(toy_view, "gelu", like="tanh")
    assert str(err.value) == "unknown op 'tanh'; known: add, mul, relu, sub"


def test_reference_stack_vocabularies_in_every_language(repo_view: MapView) -> None:
    walk = walk_new_op(repo_view, "swish", like="relu")
    vocab = {(p.layer, p.predicted, p.path) for p in walk.points if p.kind.value == "vocabulary"}
    assert ("compiler", "stack.compiler.ir.OpType.SWISH", "stack/compiler/ir.py") in vocab
    assert ("umd", "stack.umd.ops.OpKind.SWISH", "stack/umd/ops.py") in vocab
    assert ("kmd", "stack.kmd.kernels.ids.KernelId.SWISH", "stack/kmd/kernels/ids.py") in vocab
    assert ("kmd", "REFSTACK_KERNEL_SWISH", "stack/kmd/include/refstack_kmd.h") in vocab
    assert (None, "refstack.umd.v1.OpType.OP_SWISH", "contracts/umd.proto") in vocab
    assert ("runtime", "stack.runtime.opcodes.ExecOp.SWISH", "stack/runtime/opcodes.py") in vocab


def test_cli_json_and_bad_like(toy: Path) -> None:
    ok = subprocess.run(
        [str(STACKMAP), "scenario", "new-op", "gelu", "--root", str(toy), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert data["like"] == "relu"
    assert data["symbols"] == [
        "doc:docs/back.md#back-end-kernels",
        "tests.test_kernels.test_gelu_clamps",
        "toy.back.kernels.KernelId.GELU",
        "toy.back.kernels.gelu",
        "toy.front.ops.OpType.GELU",
        "toy.front.ops.import_gelu",
    ]
    bad = subprocess.run(
        [str(STACKMAP), "scenario", "new-op", "gelu", "--like", "tanh", "--root", str(toy)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip() == "error: unknown op 'tanh'; known: add, mul, relu, sub"


def test_a_weak_match_is_said(toy: Path, toy_view: MapView) -> None:
    """No op of the toy stack is much like RotaryEmbedding: the walk still follows the most
    similar, and says the match is weak (not when the op to follow was named)."""
    from mapper.scenarios import similar

    walk = walk_new_op(toy_view, "RotaryEmbedding")
    assert walk.candidates[0][1] < similar.WEAK
    assert walk.weak and walk.to_json()["weak_match"] is True
    assert not walk_new_op(toy_view, "RotaryEmbedding", like=walk.like).weak
    assert walk_new_op(toy_view, "gelu").weak is False
    text = subprocess.run(
        [str(STACKMAP), "scenario", "new-op", "RotaryEmbedding", "--root", str(toy)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith(f"new op RotaryEmbedding, modelled on {walk.like} ")
    assert text.stderr == (
        "weak match: no known op is much like RotaryEmbedding; pass --like OP to model it on "
        "the op you mean\n"
    )
