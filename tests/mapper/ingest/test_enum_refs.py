"""C enumerators a function names (fixtures/foreign/ggml-ops, an extract of ggml): ``case``
labels of a switch (``case GGML_OP_ADD:`` in the CPU backend's compute function) and values
assigned (``result->op = GGML_OP_ADD`` in the op's constructor) become ``references`` edges,
as a Python function's use of an enum member does."""

from __future__ import annotations

import shutil
from pathlib import Path

from mapper.graph import MapGraph
from mapper.ingest import ingest, load_map
from tests.mapper.conftest import FIXTURES

GGML_H = "symbol:c:include/ggml.h:"
CPU = "symbol:c:src/ggml-cpu/ggml-cpu.c:"
CORE = "symbol:c:src/ggml.c:"
OPS = ("ADD", "MUL", "RMS_NORM", "SOFT_MAX", "GATED_DELTA_NET", "LIGHTNING_INDEXER")


def _enum_edges(root: Path) -> set[tuple[str, str, str, int]]:
    ingest(root, embed=False, progress=False)
    g: MapGraph = load_map(root)
    return {
        (a["binding"], s, t, a["line"])
        for s, t, a in g.edges()
        if a.get("binding") in ("enum_case", "enum_use")
    }


def test_case_labels_and_assigned_values_reference_their_enumerators(tmp_path: Path) -> None:
    root = tmp_path / "ggml-ops"
    shutil.copytree(FIXTURES / "foreign" / "ggml-ops", root)
    found = _enum_edges(root)
    cases = {
        (t.removeprefix(GGML_H), line)
        for b, s, t, line in found
        if b == "enum_case" and s == f"{CPU}ggml_compute_forward"
    }
    # six ops, each a case of four lines, from line 9; then GGML_OP_NONE and GGML_OP_COUNT
    assert cases == {(f"GGML_OP_{op}", 9 + 4 * i) for i, op in enumerate(OPS)} | {
        ("GGML_OP_NONE", 33),
        ("GGML_OP_COUNT", 37),
    }
    constructors = {
        (s.removeprefix(CORE), t.removeprefix(GGML_H))
        for b, s, t, _ in found
        if b == "enum_use" and s.startswith(CORE)
    }
    assert constructors == {
        ("ggml_add_impl", "GGML_OP_ADD"),
        ("ggml_mul_impl", "GGML_OP_MUL"),
        ("ggml_rms_norm_impl", "GGML_OP_RMS_NORM"),
        ("ggml_soft_max_impl", "GGML_OP_SOFT_MAX"),
        ("ggml_gated_delta_net", "GGML_OP_GATED_DELTA_NET"),
        ("ggml_lightning_indexer", "GGML_OP_LIGHTNING_INDEXER"),
    }
    # the Hexagon backend switches on both vocabularies; the case labels name GGML_OP_*
    execute = {t for b, s, t, _ in found if s.endswith("htp/main.c:execute_op")}
    prefix = "symbol:c:src/ggml-hexagon/htp/htp-ops.h:HTP_OP_"
    suffixes = ("MUL", "ADD", "SUB", "DIV", "RMS_NORM", "SOFTMAX", "GATED_DELTA_NET", "INVALID")
    assert execute == {prefix + s for s in suffixes}


def test_an_enumerator_two_files_define_is_named_only_where_one_of_them_is(
    tmp_path: Path,
) -> None:
    """C has one namespace per program, not per repository: where two headers define the
    same enumerator (two builds' copies), a third file's use resolves to neither; a file
    defining it resolves to its own."""
    (tmp_path / "stackmap.toml").write_text(
        '[stackmap]\nname = "two"\n\n[[layers]]\nid = "all"\nname = "all"\npaths = ["*"]\n'
    )
    (tmp_path / "a.h").write_text("enum a_op { OP_ONE, OP_TWO, OP_THREE, OP_FOUR };\n")
    (tmp_path / "b.c").write_text(
        "enum b_op { OP_ONE, OP_TWO, OP_THREE, OP_FOUR };\n"
        "int b_use(int op) {\n"
        "    switch (op) {\n"
        "        case OP_ONE: return 1;\n"
        "    }\n"
        "    return 0;\n"
        "}\n"
    )
    (tmp_path / "c.c").write_text(
        "int c_use(int op) {\n    int x = 0;\n    x = OP_TWO;\n    return op + x;\n}\n"
    )
    found = _enum_edges(tmp_path)
    assert found == {("enum_case", "symbol:c:b.c:b_use", "symbol:c:b.c:OP_ONE", 4)}
