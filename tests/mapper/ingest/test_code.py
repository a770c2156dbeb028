"""Tree-sitter extraction per language, asserted on the miniature repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapper.errors import IngestError, UnknownNameError
from mapper.ingest.code import language_for, parse_file, parse_source, python_module
from mapper.model import Language, Param, Signature, SymbolKind

MINIREPO = Path(__file__).parents[1] / "fixtures" / "minirepo"


def _by_name(parsed):  # type: ignore[no-untyped-def]
    return {s.qualname: s for s in parsed.symbols}


def test_python_symbols_signatures_and_references() -> None:
    parsed = parse_file(MINIREPO, "compiler/passes.py")
    syms = _by_name(parsed)
    assert parsed.module == "compiler.passes"
    assert {q: s.kind for q, s in syms.items()} == {
        "compiler.passes.Pass": SymbolKind.CLASS,
        "compiler.passes.Pass.name": SymbolKind.CONSTANT,
        "compiler.passes.Pass.run": SymbolKind.METHOD,
        "compiler.passes.FusePass": SymbolKind.CLASS,
        "compiler.passes.FusePass.name": SymbolKind.CONSTANT,
        "compiler.passes.FusePass.run": SymbolKind.METHOD,
        "compiler.passes.FusePass.fuse_pair": SymbolKind.METHOD,
        "compiler.passes.compile_async": SymbolKind.FUNCTION,
    }
    fuse = syms["compiler.passes.FusePass.fuse_pair"]
    assert fuse.location.line == 27 and fuse.end_line == 28
    assert fuse.signature == Signature(
        (Param("node", "Node"), Param("keep", "bool", "False", "keyword_only")), "Node"
    )
    comp = syms["compiler.passes.compile_async"].signature
    assert comp is not None and comp.is_async and comp.returns == "list[Node]"
    assert comp.params == (Param("nodes", "Sequence[Node]"), Param("level", "int", "2"))
    assert syms["compiler.passes.FusePass"].doc == "Fuses add followed by relu."
    assert syms["compiler.passes.FusePass.name"].value == '"fuse"'
    imports = sorted(r.target for r in parsed.references if r.kind == "import")
    assert imports == [
        "collections.abc.Sequence",
        "compiler.ir",
        "compiler.ir.Node",
        "compiler.ir.make_node",
    ]
    assert dict(parsed.imports)["ir"] == "compiler.ir"
    calls = {(r.target, r.scope) for r in parsed.references if r.kind == "call"}
    assert ("make_node", "compiler.passes.FusePass.fuse_pair") in calls
    assert ("self.fuse_pair", "compiler.passes.FusePass.run") in calls
    assert ("ir.make_node", "compiler.passes.compile_async") in calls
    assert ("FusePass().run", "compiler.passes.compile_async") in calls
    assert parsed.warnings == ()


def test_python_relative_imports_and_module_level_scope() -> None:
    src = b"from ..umd import session\nfrom . import ioctl as io\nimport os.path\nsession.open()\n"
    parsed = parse_source("stack/kmd/device.py", src, Language.PYTHON)
    assert dict(parsed.imports) == {
        "session": "stack.umd.session",
        "io": "stack.kmd.ioctl",
        "os": "os",
    }
    targets = [r.target for r in parsed.references if r.kind == "import"]
    assert targets == ["stack.umd.session", "stack.kmd.ioctl", "os.path"]
    (call,) = [r for r in parsed.references if r.kind == "call"]
    assert call.scope is None and call.location.line == 4
    assert python_module("src/pkg/__init__.py") == "pkg"


def test_c_header_ioctls_structs_enums_prototypes() -> None:
    parsed = parse_file(MINIREPO, "driver/mini_drv.h")
    syms = _by_name(parsed)
    assert {q: s.kind for q, s in syms.items()} == {
        "MINI_PAGE_SIZE": SymbolKind.MACRO,
        "MINI_IOCTL_ALLOC": SymbolKind.IOCTL,
        "MINI_IOCTL_FREE": SymbolKind.IOCTL,
        "MINI_ALIGN": SymbolKind.MACRO,
        "mini_alloc": SymbolKind.STRUCT,
        "mini_dtype": SymbolKind.ENUM,
        "MINI_DTYPE_F32": SymbolKind.ENUMERATOR,
        "MINI_DTYPE_F16": SymbolKind.ENUMERATOR,
        "MINI_DTYPE_I8": SymbolKind.ENUMERATOR,
        "mini_alloc_pages": SymbolKind.FUNCTION,
        "mini_free_pages": SymbolKind.FUNCTION,
    }
    assert syms["MINI_IOCTL_ALLOC"].value == "_IOWR('M', 1, struct mini_alloc)"
    assert syms["MINI_IOCTL_ALLOC"].location.line == 7
    assert [syms[f"MINI_DTYPE_{n}"].value for n in ("F32", "F16", "I8")] == ["1", "2", "7"]
    assert syms["MINI_ALIGN"].signature == Signature((Param("x"),))
    assert syms["mini_alloc_pages"].signature == Signature(
        (Param("count", "int"),), "unsigned long"
    )
    assert syms["mini_alloc_pages"].node_id == "symbol:c:driver/mini_drv.h:mini_alloc_pages"
    assert [(r.kind, r.target) for r in parsed.references] == [("include", "stdint.h")]


def test_c_source_calls_have_scopes() -> None:
    parsed = parse_file(MINIREPO, "driver/mini_drv.c")
    calls = [(r.target, r.scope, r.location.line) for r in parsed.references if r.kind == "call"]
    assert calls == [
        ("mini_alloc_pages", "mini_ioctl", 16),
        ("mini_free_pages", "mini_ioctl", 19),
    ]
    sig = _by_name(parsed)["mini_ioctl"].signature
    assert sig == Signature((Param("cmd", "unsigned int"), Param("arg", "void*")), "int")


def test_cpp_namespaces_classes_methods() -> None:
    assert parse_file(MINIREPO, "runtime/runtime.h").language is Language.CPP  # sniffed
    header = _by_name(parse_file(MINIREPO, "runtime/runtime.h"))
    assert header["rt::Runtime"].kind is SymbolKind.CLASS
    launch = header["rt::Runtime::launch"]
    assert launch.kind is SymbolKind.METHOD
    assert launch.signature == Signature(
        (Param("name", "const char*"), Param("grid", "int", "1")), "int"
    )
    source = parse_file(MINIREPO, "runtime/runtime.cpp")
    assert set(_by_name(source)) == {"rt::Runtime::launch", "rt::Runtime::release"}
    calls = {(r.target, r.scope) for r in source.references if r.kind == "call"}
    assert calls == {
        ("mini_alloc_pages", "rt::Runtime::launch"),
        ("release", "rt::Runtime::launch"),
        ("mini_free_pages", "rt::Runtime::release"),
    }
    includes = [r.target for r in source.references if r.kind == "include"]
    assert includes == ["runtime.h", "vector"]


def test_cuda_kernels() -> None:
    parsed = parse_file(MINIREPO, "kernels/add.cu")
    syms = _by_name(parsed)
    assert {q: s.kind for q, s in syms.items()} == {
        "twice": SymbolKind.FUNCTION,
        "add_kernel": SymbolKind.KERNEL,
        "launch_add": SymbolKind.FUNCTION,
    }
    assert parsed.language is Language.CUDA
    calls = {(r.target, r.scope) for r in parsed.references if r.kind == "call"}
    assert calls == {("twice", "add_kernel"), ("add_kernel", "launch_add")}


def test_syntax_error_gives_partial_symbols_and_warning() -> None:
    src = (
        b"def good(a: int) -> int:\n    return a\n\ndef bad(:\n    pass\n\nclass After:\n    pass\n"
    )
    parsed = parse_source("m.py", src, Language.PYTHON)
    names = {s.qualname for s in parsed.symbols}
    assert {"m.good", "m.After"} <= names
    assert len(parsed.warnings) == 1 and "line(s) 4" in parsed.warnings[0]


def test_language_for_and_errors(tmp_path: Path) -> None:
    assert language_for("a/b.cuh") is Language.CUDA
    assert language_for("a/b.hpp") is Language.CPP
    assert language_for("x.rs") is None
    with pytest.raises(UnknownNameError, match="known: c, cpp, cuda, python"):
        parse_source("x.md", b"", Language.MARKDOWN)
    (tmp_path / "latin1.py").write_bytes(b"x = '\xe9'\n")
    with pytest.raises(IngestError, match="not UTF-8"):
        parse_file(tmp_path, "latin1.py")
    (tmp_path / "bin.c").write_bytes(b"\x00\x01\x02")
    with pytest.raises(IngestError, match="binary"):
        parse_file(tmp_path, "bin.c")


def test_precomputed_ioctl_numbers_and_template_calls() -> None:
    src = (
        b"#define DRV_IOCTL_FREE 0x40105204u /* _IOW('R', 4, 16) */\n"
        b"#define DRV_PAGE 4096u\n"
        b"void f(void) { std::max<int>(1, 2); }\n"
    )
    parsed = parse_source("drv.h", src, Language.CPP)
    syms = _by_name(parsed)
    assert syms["DRV_IOCTL_FREE"].kind is SymbolKind.IOCTL
    assert syms["DRV_IOCTL_FREE"].value == "0x40105204u"
    assert syms["DRV_PAGE"].kind is SymbolKind.MACRO
    assert [r.target for r in parsed.references] == ["std::max"]


def test_a_definition_without_body_parses_to_a_symbol() -> None:
    parsed = parse_source("m.py", b"def ok() -> int:\n    return 1\n\ndef bad(:\n", Language.PYTHON)
    assert {s.qualname for s in parsed.symbols} >= {"m.ok", "m.bad"}
    assert parsed.warnings and "syntax errors" in parsed.warnings[0]


def test_call_text_and_lines_after_leading_blank_lines_and_comments() -> None:
    # the tree's root starts after the leading blank lines: call text is sliced relative to it
    source = (
        b"\n\n   \n# header\ndef f(x):\n    return helper.run(\n        x)\n\n\nf(obj . go())\n"
    )
    parsed = parse_source("pkg/m.py", source, Language.PYTHON)
    calls = [(r.target, r.location.line, r.scope) for r in parsed.references if r.kind == "call"]
    assert calls == [("helper.run", 6, "pkg.m.f"), ("f", 10, None), ("obj.go", 10, None)]
    no_detail = parse_source("pkg/m.py", source, Language.PYTHON, detail=False)
    assert [r.target for r in no_detail.references] == ["helper.run"]


def test_each_name_a_tuple_assignment_binds_is_a_constant_with_its_own_value() -> None:
    """``A, B = x, y`` and ``(A, B) = x, y`` at module or class level define each name (its own
    value when the right side lists one per name, else the whole right side); a starred name
    is no constant, and neither is a name assigned only under an ``if``."""
    source = (
        b'DEFAULT_FLOAT, DEFAULT_INT = ContextVar("f", "float32"), ContextVar("i", "int32")\n'
        b"LOW, HIGH = bounds()\n"
        b"FIRST, *REST = 1, 2, 3\n"
        b"(WIDTH, DEPTH) = 4, 5\n"
        b"if LOW:\n"
        b"    HIDDEN = 6\n"
        b"\n\n"
        b"class Mode:\n"
        b'    FAST, SLOW = "fast", "slow"\n'
    )
    parsed = parse_source("m.py", source, Language.PYTHON, "m")
    assert [(s.qualname, s.kind, s.value, s.location.line) for s in parsed.symbols] == [
        ("m.Mode", SymbolKind.CLASS, None, 9),
        ("m.DEFAULT_FLOAT", SymbolKind.CONSTANT, 'ContextVar("f", "float32")', 1),
        ("m.DEFAULT_INT", SymbolKind.CONSTANT, 'ContextVar("i", "int32")', 1),
        ("m.LOW", SymbolKind.CONSTANT, "bounds()", 2),
        ("m.HIGH", SymbolKind.CONSTANT, "bounds()", 2),
        ("m.FIRST", SymbolKind.CONSTANT, "1, 2, 3", 3),
        ("m.WIDTH", SymbolKind.CONSTANT, "4", 4),
        ("m.DEPTH", SymbolKind.CONSTANT, "5", 4),
        ("m.Mode.FAST", SymbolKind.CONSTANT, '"fast"', 10),
        ("m.Mode.SLOW", SymbolKind.CONSTANT, '"slow"', 10),
    ]
