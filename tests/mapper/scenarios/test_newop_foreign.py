"""``scenario new-op`` on a stack that wrote no contracts (fixtures/foreign/ggml-ops, an
extract of ggml 0.3.34): its ops are the values of ``enum ggml_op`` that the Hexagon backend's
``enum htp_op_code`` also names, a backend's handler is the function its compute switch calls
for the op's ``case`` (and the header declaring it). ``GGML_OP_LIGHTNING_INDEXER``, which
only the core and the CPU backend spell so far, is an op as well, two backends switching on
``enum ggml_op``; its sentinels (``GGML_OP_NONE``, ``GGML_OP_COUNT``) are not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mapper.errors import UnknownNameError
from mapper.impact import open_view
from mapper.impact.mapview import MapView
from mapper.ingest import ingest
from mapper.scenarios import opfamily
from mapper.scenarios.newop import walk_new_op
from tests.mapper.conftest import FIXTURES

CORE_AND_CPU = [
    ("implementation", "include/ggml.h", "ggml_dsv4_hc_comb"),
    ("implementation", "src/ggml.c", "ggml_dsv4_hc_comb"),
    ("vocabulary", "include/ggml.h", "GGML_OP_DSV4_HC_COMB"),
    ("implementation", "src/ggml-cpu/ops.cpp", "ggml_compute_forward_dsv4_hc_comb"),
    ("implementation", "src/ggml-cpu/ops.h", "ggml_compute_forward_dsv4_hc_comb"),
    ("use", "src/ggml-cpu/ggml-cpu.c", "ggml_compute_forward"),
]


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> MapView:
    root = tmp_path_factory.mktemp("foreign") / "ggml-ops"
    shutil.copytree(FIXTURES / "foreign" / "ggml-ops", root)
    ingest(root, embed=False, progress=False)
    return open_view(root)


def _points(view: MapView, like: str) -> list[tuple[str, str, str]]:
    walk = walk_new_op(view, "dsv4_hc_comb", like).to_json()
    return [
        (p["kind"], p["path"], p["predicted"]) for plan in walk["layers"] for p in plan["points"]
    ]


def test_modelled_on_an_op_of_the_core_and_cpu_only(view: MapView) -> None:
    assert _points(view, "lightning_indexer") == CORE_AND_CPU


def test_modelled_on_an_op_the_hexagon_backend_runs_too(view: MapView) -> None:
    hexagon = [
        (
            "implementation",
            "src/ggml-hexagon/ggml-hexagon.cpp",
            "ggml_hexagon_supported_dsv4_hc_comb",
        ),
        ("implementation", "src/ggml-hexagon/htp/dsv4-hc-comb-ops.c", ""),
        ("implementation", "src/ggml-hexagon/htp/htp-ctx.h", "op_dsv4_hc_comb"),
        ("use", "src/ggml-hexagon/ggml-hexagon.cpp", "op_remap_to_htp"),
        ("use", "src/ggml-hexagon/ggml-hexagon.cpp", "ggml_backend_hexagon_device_supports_op"),
        ("use", "src/ggml-hexagon/htp/main.c", "execute_op"),
        ("vocabulary", "src/ggml-hexagon/htp/htp-ops.h", "HTP_OP_DSV4_HC_COMB"),
    ]
    assert _points(view, "gated_delta_net") == CORE_AND_CPU + hexagon


def test_an_unknown_model_op_lists_the_known_ones(view: MapView) -> None:
    with pytest.raises(UnknownNameError) as err:
        walk_new_op(view, "dsv4_hc_comb", "flash_attn_ext")
    known = "add, gateddeltanet, lightningindexer, mul, rmsnorm, softmax"
    assert str(err.value) == f"unknown op 'flash_attn_ext'; known: {known}"


def test_one_enum_two_backends_switch_on_is_a_vocabulary_of_ops(tmp_path: Path) -> None:
    """Without the Hexagon backend's own enum (ggml before it had one) no second vocabulary
    names the ops: ``enum ggml_op`` is still one, the CPU backend's compute function and the
    Hexagon backend's supports_op switching on its values."""
    root = tmp_path / "ggml-ops"
    shutil.copytree(FIXTURES / "foreign" / "ggml-ops", root)
    shutil.rmtree(root / "src" / "ggml-hexagon" / "htp")
    ingest(root, embed=False, progress=False)
    view = open_view(root)
    assert sorted(opfamily.ops(view)) == [
        "add",
        "gateddeltanet",
        "lightningindexer",
        "mul",
        "rmsnorm",
        "softmax",
    ]
    hexagon = [
        (
            "implementation",
            "src/ggml-hexagon/ggml-hexagon.cpp",
            "ggml_hexagon_supported_dsv4_hc_comb",
        ),
        ("use", "src/ggml-hexagon/ggml-hexagon.cpp", "op_remap_to_htp"),
        ("use", "src/ggml-hexagon/ggml-hexagon.cpp", "ggml_backend_hexagon_device_supports_op"),
    ]
    assert _points(view, "gated_delta_net") == CORE_AND_CPU + hexagon
    (root / "src" / "ggml-hexagon" / "ggml-hexagon.cpp").unlink()
    ingest(root, embed=False, progress=False)
    assert opfamily.ops(open_view(root)) == {}  # one file switching on them is one backend's
