"""``scenario new-op`` on a stack that wrote no contracts (fixtures/foreign/ggml-ops, an
extract of ggml 0.3.34): its ops are the values of ``enum ggml_op`` that the Hexagon backend's
``enum htp_op_code`` also names, a backend's handler is the function its compute switch calls
for the op's ``case`` (and the header declaring it), and an op only the core and the CPU
backend spell so far (``GGML_OP_LIGHTNING_INDEXER``) can still be the model asked for by
name."""

from __future__ import annotations

import shutil

import pytest

from mapper.errors import UnknownNameError
from mapper.impact import open_view
from mapper.impact.mapview import MapView
from mapper.ingest import ingest
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
    assert "add, gateddeltanet, mul, rmsnorm" in str(err.value)
