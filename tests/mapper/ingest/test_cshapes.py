"""Macro shapes and preprocessor branches in real library code (extracts of ggml and
llama.cpp, ``tests/mapper/fixtures/foreign/cshapes``) parse without syntax errors, with every
definition and call at its original line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapper.ingest import cbranches, cmacros, cshapes, treesitter
from mapper.ingest.code import parse_file, sniff_language
from mapper.model import Language

ROOT = Path(__file__).parents[1] / "fixtures" / "foreign" / "cshapes"

# file → (language, definitions (name, kind, line, end line), calls (callee, line))
EXPECTED = {
    "ggml.h": (
        Language.C,
        {
            ("GGML_DEPRECATED", "macro", 3, 4),
            ("ggml_row_size", "function", 9, 9),
            ("ggml_type_sizef", "function", 12, 13),  # the prototype inside the wrapper
            ("ggml_type_name", "function", 15, 15),
        },
        set(),
    ),
    "llama.h": (
        Language.C,
        {
            ("llama_load_model_from_file", "function", 5, 8),
            ("llama_vocab_cls", "function", 10, 11),
            ("llama_vocab_bos", "function", 13, 13),
        },
        set(),
    ),
    "ggml-cpu.c": (
        Language.C,
        {
            ("ggml_threadpool", "struct", 15, 19),
            ("ggml_tallocr_new", "function", 21, 32),
            ("ggml_vec_dot_q1_0_q8_0_vl256", "function", 34, 36),
            ("ggml_compute_forward_add", "function", 38, 46),
        },
        {
            ("ggml_backend_buffer_get_base", 22),
            ("ggml_backend_buffer_get_alignment", 23),
            ("aligned_offset", 29),
            ("ggml_vec_dot_q1_0_q8_0_generic", 35),
            ("ggml_compute_forward_add_f32", 45),
        },
    ),
    "fattn.cu": (
        Language.CUDA,
        {
            ("ggml_cuda_flash_attn_ext_mma_f16_case", "function", 3, 14),
            ("ggml_cuda_check_tensors", "function", 19, 28),
            ("ggml_cuda_op_gated_delta_net", "function", 30, 34),
        },
        {
            ("launch_fattn", 13),
            ("ggml_nelements", 21),
            ("GGML_LOG_ERROR", 22),
            ("ggml_nelements", 23),
            ("GGML_TENSOR_LOCALS", 32),
            ("ctx.stream", 33),
            ("launch_gated_delta_net", 33),
        },
    ),
    "cpu-feats.cpp": (
        Language.CPP,
        {
            ("ggml_backend_cpu_x86_score", "function", 2, 5),
            ("llama_model_llama::graph<embed>::graph", "method", 10, 12),
        },
        {("build_inp_embd", 11)},
    ),
    "llama-context.h": (
        Language.CPP,  # a C++ header: member defaults, ``#include <vector>``
        {
            ("llama_memory_breakdown_data", "struct", 8, 15),
            ("llama_memory_breakdown_data::total", "method", 12, 14),
            ("llama_file_ranges", "struct", 17, 19),
            ("llama_file_ranges::load", "method", 18, 18),
        },
        set(),
    ),
    "element_wise.hpp": (
        Language.CPP,
        {("op_tanh", "function", 2, 4), ("op_repeat", "function", 6, 8)},
        {("sycl::tanh", 3)},
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_library_code_parses_with_every_definition_and_call_in_place(name: str) -> None:
    language, definitions, calls = EXPECTED[name]
    source = (ROOT / name).read_bytes()
    # the shapes are really there: with the named macros alone, the parser fails
    named_only = treesitter.parse(language, cmacros.rewrite(source))
    assert treesitter.error_lines(named_only.root_node) != []
    parsed = parse_file(ROOT, name)
    assert (parsed.language, parsed.warnings) == (language, ())
    assert {
        (s.qualname, s.kind.value, s.location.line, s.end_line) for s in parsed.symbols
    } == definitions
    got = sorted((r.target, r.location.line) for r in parsed.references if r.kind == "call")
    assert got == sorted(calls)


def test_shapes_keep_every_line() -> None:
    for name in EXPECTED:
        source = (ROOT / name).read_bytes()
        assert cshapes.rewrite(source).count(b"\n") == source.count(b"\n")


def test_string_macros_read_as_strings_outside_directives() -> None:
    src = b'#define MSG "a" NAME\nf("%" PRId64 "\\n", x);\ng("n=" FMT_SIZE, n);\n'
    assert cshapes.rewrite(src) == (b'#define MSG "a" NAME\nf("%" "" "\\n", x);\ng("n=" "", n);\n')


def test_macro_lines_left_alone_where_they_are_part_of_code() -> None:
    src = (
        b"int f(void) {\n"
        b"    int x = a +\n"
        b"    MACRO(b)\n"  # an operand: the next line goes on with +
        b"    + c;\n"
        b"    LOOP_EACH(i, n) {\n"  # a loop header
        b"        g(i);\n"
        b"    }\n"
        b"    return x;\n"
        b"}\n"
    )
    assert cshapes.rewrite(src) == src


def test_unbalanced_parenthesis_under_if_zero_does_not_swallow_the_block() -> None:
    # amdgpu's vce_v4_0.c keeps code with a parenthesis left open under #if 0
    src = (
        b"#if 0\n"
        b"static void f(void)\n"
        b"{\n"
        b"\t\tif (enable) {\n"
        b"\t\t\tWREG32(OFFSET(VCE, 0, mmA, data);\n"
        b"\t\t}\n"
        b"}\n"
        b"#endif\n"
        b"int g(void) { return 0; }\n"
    )
    assert cshapes.rewrite(src) == src
    tree = cbranches.parse_resolving_branches(Language.C, src)
    assert treesitter.error_lines(tree.root_node) == []


def test_only_the_groups_that_break_parsing_lose_their_other_branches() -> None:
    src = (
        b"#ifdef USE_A\n"  # 1: parses with both branches: kept as written
        b"int a(void);\n"
        b"#else\n"
        b"int b(void);\n"
        b"#endif\n"
        b"int f(int x) {\n"
        b"#ifdef FAST\n"  # 7: ``} else`` across #endif: reduced to its first branch
        b"    if (x) { return 1; } else\n"
        b"#endif\n"
        b"    { return 0; }\n"
        b"}\n"
    )
    lines = src.decode().split("\n")
    assert [(g.start, g.branches, g.end) for g in cbranches.groups(lines)] == [
        (1, (3,), 5),
        (7, (), 9),
    ]
    tree = cbranches.parse_resolving_branches(Language.C, src)
    assert treesitter.error_lines(tree.root_node) == []
    # the group that parsed is still a conditional with both branches
    assert [n.type for n in tree.root_node.children][:2] == ["preproc_ifdef", "function_definition"]
    assert sniff_language("x.h", src) is Language.C


def test_a_reduced_group_is_parsed_again_from_the_first_tree_as_a_fresh_parse_would() -> None:
    src = (
        b"int f(int x) {\n"
        b"#ifdef FAST\n"  # 2: ``} else`` across #endif: its directives become spaces
        b"    if (x) { return 1; } else\n"
        b"#else\n"
        b"    if (!x) { return 2; } else\n"
        b"#endif\n"
        b"    { return 0; }\n"
        b"}\n"
        b"int g(void) { return 1; }\n"
    )
    blanked = (
        b"int f(int x) {\n"
        b"            \n"
        b"    if (x) { return 1; } else\n"
        b"     \n"
        b"                              \n"
        b"      \n"
        b"    { return 0; }\n"
        b"}\n"
        b"int g(void) { return 1; }\n"
    )
    assert treesitter.error_lines(treesitter.parse(Language.C, src).root_node) != []
    assert cbranches.dropped(
        src.decode().split("\n"), cbranches.groups(src.decode().split("\n"))
    ) == {
        2,
        4,
        5,
        6,
    }
    tree = cbranches.parse_resolving_branches(Language.C, src)
    assert treesitter.error_lines(tree.root_node) == []
    assert str(tree.root_node) == str(treesitter.parse(Language.C, blanked).root_node)
    assert [(n.type, n.start_point[0] + 1) for n in tree.root_node.children] == [
        ("function_definition", 1),
        ("function_definition", 9),
    ]
