"""Kernel- and library-style macros rewritten so tree-sitter parses C as drivers write it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapper.config import CConfig, load_config
from mapper.errors import ConfigError
from mapper.ingest import cmacros, ctext
from mapper.ingest.code import parse_source
from mapper.model import Language

KERNEL_STYLE = b"""struct kfd_queue {
\tuint64_t __user *read_ptr;
\tvoid __iomem *doorbell;
\tDECLARE_BITMAP(bitmap, MAX_GPU);
\tuint32_t:1;
};
static DEFINE_MUTEX(kfd_mutex);
static int __init kfd_init(void) __acquires(lock)
{
\tstruct kfd_dev *dev = container_of(work, struct kfd_dev,
\t\t\t\t\t   interrupt_work);
\tunsigned int n = min_t(unsigned int, a, b);
\tlist_for_each_entry(cur, queues, list) {
\t\tkfd_process(cur);
\t}
\treturn n;
}
EXPORT_SYMBOL(kfd_init);
"""


def test_rewrite_keeps_every_line_and_parses_kernel_style_c() -> None:
    plain = parse_source("k.c", KERNEL_STYLE, Language.C, macros=cmacros.MacroSet())
    assert plain.warnings != ()
    rewritten = cmacros.rewrite(KERNEL_STYLE)
    assert rewritten.count(b"\n") == KERNEL_STYLE.count(b"\n")
    parsed = parse_source("k.c", KERNEL_STYLE, Language.C)
    assert parsed.warnings == ()
    kinds = {(s.qualname, s.kind.value, s.location.line) for s in parsed.symbols}
    assert kinds == {("kfd_queue", "struct", 1), ("kfd_init", "function", 8)}
    calls = [(r.target, r.scope, r.location.line) for r in parsed.references if r.kind == "call"]
    assert calls == [
        ("container_of", "kfd_init", 10),
        ("min_t", "kfd_init", 12),
        ("kfd_process", "kfd_init", 14),
        ("EXPORT_SYMBOL", None, 18),
    ]


def test_export_macros_and_attribute_calls_are_stripped() -> None:
    src = (
        b"GGML_API const char * ggml_backend_name(ggml_backend_t b);\n"
        b"MYLIB_EXPORT int f(void) __aligned(8);\n"
    )
    assert (
        cmacros.rewrite(src)
        == b" const char * ggml_backend_name(ggml_backend_t b);\n int f(void) ;\n"
    )


def test_first_branches_blanks_other_branches_and_if_zero() -> None:
    src = b"int a = f(x,\n#ifdef BIG\n  1);\n#else\n  2);\n#endif\n#if 0\nbroken(\n#endif\n"
    assert ctext.first_branches(src) == b"int a = f(x,\n\n  1);\n\n\n\n\n\n\n"


def test_configured_macros_extend_the_built_in_set(tmp_path: Path) -> None:
    (tmp_path / "stackmap.toml").write_text(
        '[stackmap]\n[stackmap.c]\nstrip = ["MY_ANNOT"]\nloops = ["each_umc"]\n'
        'type_args = {my_cast = 0}\ndefine = {u128 = "unsigned long"}\n'
    )
    config = load_config(tmp_path)
    assert config.c == CConfig(
        strip=("MY_ANNOT",),
        loops=("each_umc",),
        type_args=(("my_cast", 0),),
        define=(("u128", "unsigned long"),),
    )
    src = b"MY_ANNOT u128 g(void) {\n\teach_umc(i, j) {\n\t\th(my_cast(int, i));\n\t}\n}\n"
    macros = cmacros.macro_set(config.c)
    assert parse_source("u.c", src, Language.C).warnings != ()
    assert parse_source("u.c", src, Language.C, macros=macros).warnings == ()


def test_unknown_c_config_key_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "stackmap.toml").write_text("[stackmap]\n[stackmap.c]\nstrips = []\n")
    with pytest.raises(ConfigError, match=r"unknown \[stackmap.c\] keys \['strips'\]"):
        load_config(tmp_path)


def test_struct_type_arguments_become_zero_outside_sizeof_and_directives() -> None:
    src = (
        b"#define IOC \\\n\tDRM_IOW(0x09, struct drm_gem_close)\n"
        b"void f(void) {\n\tvirtio_cread_le(vdev, struct virtio_gpu_config,\n\t\tevents, &e);\n"
        b"\tn = sizeof(struct drm_gem_close);\n"
        b'\tc = kmem_cache_create("v", 8, __alignof__(struct virtio_gpu_vbuffer), 0);\n}\n'
    )
    assert cmacros.rewrite(src) == (
        b"#define IOC \\\n\tDRM_IOW(0x09, struct drm_gem_close)\n"
        b"void f(void) {\n\tvirtio_cread_le(vdev, 0,\n\t\tevents, &e);\n"
        b"\tn = sizeof(struct drm_gem_close);\n"
        b'\tc = kmem_cache_create("v", 8, __alignof__(struct virtio_gpu_vbuffer), 0);\n}\n'
    )


def test_the_rewrite_regex_names_only_the_macros_a_text_uses() -> None:
    # a member named like a macro (``s.__user``, ``p->GGML_API``) is not a use, as before
    text = "GGML_API int f(void __user *p);\nlist_for_each_entry(a, b, c) { s.__init; }\n"
    pattern = cmacros.BUILTIN.pattern(text)
    assert pattern is not None
    assert [m.group(0) for m in pattern.finditer(text)] == [
        "GGML_API",
        "__user",
        "list_for_each_entry",
    ]
    assert cmacros.BUILTIN.pattern("int f(int x) { return g(x); }\n") is None
    assert cmacros.rewrite(b"int f(int x) { return g(x); }\n") == b"int f(int x) { return g(x); }\n"
