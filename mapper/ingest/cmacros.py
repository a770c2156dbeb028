"""Macros tree-sitter cannot see through, rewritten before a C/C++/CUDA file is parsed.

tree-sitter parses C without a preprocessor, so kernel- and library-style code — ``void __user
*p``, ``GGML_API int f(void);``, ``container_of(w, struct kfd_dev, work)``,
``list_for_each_entry(pos, head, list) { … }`` — reads as syntax errors, and a prototype behind
an export macro reads as a call. :func:`rewrite` turns such macro uses into plain C of the same
meaning for the map, **keeping every line where it is** (a rewrite never adds or removes a
newline; columns may move), so every location the parser reports is the original's.

The rules (built-in sets in :mod:`mapper.ingest.cmacro_names`, extended per repository
from ``[c]`` in ``stackmap.toml``):

- ``strip``: annotation identifiers removed (``__user``, ``__iomem``, ``GGML_API``; any
  ``UPPER_API``/``_EXPORT``/``_CALL``-style name is an export macro too);
- ``strip_calls``: function-like annotations removed with their arguments
  (``__aligned(8)``, ``__printf(1, 2)``, ``__acquires(lock)``);
- ``type_args``: a macro whose argument at a given index is a type (``container_of`` at 1,
  ``min_t`` at 0) gets a ``0`` in that place, so the use stays a call with its other arguments;
- ``loops``: ``for_each``-style iteration macros (any name containing ``for_each``) become a
  ``while`` over their arguments, so the block after them parses;
- ``declarators``: ``DECLARE_*``/``DEFINE_*`` macros (and ``LIST_HEAD``) declare the names
  they are given: ``DECLARE_BITMAP(map, N);`` becomes ``int map, N;``;
- ``define``: ``NAME = replacement`` text substitutions, for whatever else a repository needs.

An anonymous bit-field (``uint32_t:1;``) gets a placeholder name. Rewriting is textual: it
also touches comments and strings, which the map never reads as code.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from mapper.config import CConfig
from mapper.ingest.cmacro_names import (
    KERNEL_DECLARATORS,
    KERNEL_STRIP,
    KERNEL_STRIP_CALLS,
    KERNEL_TYPE_ARGS,
    LIBRARY_STRIP,
)
from mapper.ingest.ctext import call_args, in_directive, newlines

_EXPORT_LIKE = (
    r"[A-Z][A-Z0-9]*_(?:API|EXPORT|EXPORTS|CALL|PUBLIC|DLL|EXTERN|INLINE|DEPRECATED_API)"
    r"|[A-Z][A-Z0-9_]*_(?:API|EXPORT|EXPORTS|DLL)"
)
_LOOP_LIKE = r"[A-Za-z0-9_]*for_each[A-Za-z0-9_]*"
_DECL_LIKE = r"(?:DECLARE|DEFINE)_[A-Z0-9_]+"
_BITFIELD = re.compile(
    r"(?m)^([ \t]*)((?:unsigned\s+|signed\s+)?(?:int|long|short|char|bool|_Bool|[us](?:8|16|32|64)"
    r"|__[us](?:8|16|32|64)|[A-Za-z_]\w*_t))(\s*:\s*\d+\s*;)"
)
# what every bit-field has: tried first, it spares most files the scan of every line start
# (on llama.cpp's C/C++ sources: one in seven has it; 0.03 s against 0.8 s for the full scan)
_BITFIELD_HINT = re.compile(r":\s*\d+\s*;")
_CAPS_LOOP = re.compile(r"(?m)^([ \t]+)([A-Z][A-Z0-9_]*[A-Z0-9])(?=\s*\()")
_STRUCT_ARG = re.compile(r"([(,])(\s*)(struct\s+[A-Za-z_]\w*)(\s*)(?=[,)])")
_TYPE_OPERATOR = re.compile(
    r"\b(?:sizeof|typeof|__typeof__|__typeof|alignof|_Alignof|__alignof__|__alignof)$"
)
_RENAMED = {"offsetof": "offsetof_"}
_CALLEE_END = re.compile(r"(?<!\breturn)(?<=\w)$")  # a name (not ``return``) right before ``(``
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD = re.compile(r"[A-Za-z0-9_]+")  # a macro use is one whole such word (see pattern())
_GENERIC = re.compile("|".join((_EXPORT_LIKE, _LOOP_LIKE, _DECL_LIKE)))


@dataclass(frozen=True, slots=True)
class MacroSet:
    """Which macro uses :func:`rewrite` turns into plain C (see the module docstring)."""

    strip: frozenset[str] = frozenset()
    strip_calls: frozenset[str] = frozenset()
    type_args: tuple[tuple[str, int], ...] = ()
    loops: frozenset[str] = frozenset()
    declarators: frozenset[str] = frozenset()
    define: tuple[tuple[str, str], ...] = ()
    _names: frozenset[str] | None = field(default=None, compare=False, repr=False)

    def extended(
        self,
        *,
        strip: Iterable[str] = (),
        strip_calls: Iterable[str] = (),
        type_args: Mapping[str, int] | None = None,
        loops: Iterable[str] = (),
        declarators: Iterable[str] = (),
        define: Mapping[str, str] | None = None,
    ) -> MacroSet:
        """This set plus the given names (a repository's ``[c]`` configuration)."""
        return MacroSet(
            self.strip | frozenset(strip),
            self.strip_calls | frozenset(strip_calls),
            tuple({**dict(self.type_args), **dict(type_args or {})}.items()),
            self.loops | frozenset(loops),
            self.declarators | frozenset(declarators),
            tuple({**dict(self.define), **dict(define or {})}.items()),
        )

    def pattern(self, text: str) -> re.Pattern[str] | None:
        """The regex finding every use in ``text`` of an identifier a rule applies to, None
        when there is none. The text's words are looked up in the set first and the regex
        names only those found: a regex of every name the set knows would be tried at each
        position of the text, which made the rewrite cost more than the parse."""
        words = set(_WORD.findall(text))
        found = (words & self.names()) | {w for w in words if _GENERIC.fullmatch(w)}
        return _alternatives(tuple(sorted(found, key=lambda n: (-len(n), n)))) if found else None

    def names(self) -> frozenset[str]:
        """Every name a rule of the set applies to (but the generic shapes)."""
        if self._names is None:
            names = frozenset(
                self.strip
                | self.strip_calls
                | self.loops
                | self.declarators
                | {n for n, _ in self.type_args}
                | {n for n, _ in self.define}
            )
            object.__setattr__(self, "_names", names)
            return names
        return self._names


@functools.lru_cache(maxsize=256)
def _alternatives(names: tuple[str, ...]) -> re.Pattern[str]:
    """A whole identifier among ``names`` (not a member after ``.`` or ``->``)."""
    return re.compile(r"(?<![\w.>])(?:" + "|".join(map(re.escape, names)) + r")(?!\w)")


BUILTIN = MacroSet(
    frozenset(KERNEL_STRIP + LIBRARY_STRIP),
    frozenset(KERNEL_STRIP_CALLS),
    tuple(KERNEL_TYPE_ARGS.items()),
    frozenset(),
    frozenset(KERNEL_DECLARATORS),
    (("__volatile__", "volatile"), ("__volatile", "volatile"), ("__signed__", "signed")),
)


@functools.lru_cache(maxsize=16)
def macro_set(config: CConfig) -> MacroSet:
    """The built-in set extended with a repository's ``[stackmap.c]`` configuration."""
    return BUILTIN.extended(
        strip=config.strip,
        strip_calls=config.strip_calls,
        type_args=dict(config.type_args),
        loops=config.loops,
        declarators=config.declarators,
        define=dict(config.define),
    )


def rewrite(source: bytes, macros: MacroSet = BUILTIN) -> bytes:
    """``source`` with the set's macro uses rewritten; every newline stays where it was."""
    text = source.decode("utf-8", errors="replace")
    pattern = macros.pattern(text)
    bitfields = _BITFIELD_HINT.search(text) is not None
    if (
        pattern is None
        and not bitfields
        and all(p.search(text) is None for p in (_CAPS_LOOP, _STRUCT_ARG))
    ):
        return source
    type_args = dict(macros.type_args)
    defines = dict(macros.define)
    out: list[str] = []
    pos = 0
    for match in pattern.finditer(text) if pattern is not None else ():
        start, end = match.span()
        if start < pos or in_directive(text, start):
            continue
        name = match.group(0)
        out.append(text[pos:start])
        pos, replacement = _apply(text, name, end, macros, type_args, defines)
        out.append(replacement)
    out.append(text[pos:])
    rewritten = "".join(out)
    if bitfields:
        rewritten = _BITFIELD.sub(_name_bitfield, rewritten)
    rewritten = _STRUCT_ARG.sub(_struct_arg, _CAPS_LOOP.sub(_caps_loop, rewritten))
    return rewritten.encode("utf-8")


def _struct_arg(match: re.Match[str]) -> str:
    """A whole call argument ``struct T`` names a type: the macro's business, a ``0`` here
    (``virtio_cread_le(dev, struct virtio_gpu_config, …)``); ``sizeof(struct T)``, a cast and
    a compound literal ``(struct T) { … }`` (no callee before the parenthesis) stay."""
    before = match.string[max(0, match.start() - 24) : match.start()].rstrip()
    if in_directive(match.string, match.start()) or (
        match.group(1) == "("
        and (
            _TYPE_OPERATOR.search(before)
            or not re.search(r"\w$", before)
            or before.endswith("return")
        )
    ):
        return match.group(0)
    return match.group(1) + match.group(2) + "0" + newlines(match.group(3)) + match.group(4)


def _caps_loop(match: re.Match[str]) -> str:
    """An indented ``UPPER_CASE(args) {`` is an iteration macro: a ``while`` over its args."""
    args = call_args(match.string, match.end(2))
    if args is None:
        return match.group(0)
    close, _ = args
    after = match.string[close + 1 : close + 40].lstrip(" \t")
    return match.group(1) + "while " if after.startswith("{") else match.group(0)


def _apply(
    text: str,
    name: str,
    end: int,
    macros: MacroSet,
    type_args: Mapping[str, int],
    defines: Mapping[str, str],
) -> tuple[int, str]:
    """(where the untouched text resumes, what replaces ``text[start:that]``)."""
    if name in defines:
        return end, defines[name]
    args = call_args(text, end)
    if name in macros.strip or (args is None and _is_export_like(name)):
        return end, ""
    if args is None:
        return end, name
    close, parts = args
    raw = text[end : close + 1]
    if name in macros.strip_calls:
        return close + 1, newlines(raw)
    if name in type_args:
        index = type_args[name]
        if -len(parts) <= index < len(parts):
            parts = list(parts)
            parts[index] = "0" + newlines(parts[index])
        # the grammar reads offsetof's first argument as a type: renamed, it is a plain call
        return close + 1, f"{_RENAMED.get(name, name)}({','.join(parts)})"
    if name in macros.loops or re.fullmatch(_LOOP_LIKE, name):
        return close + 1, f"while ({','.join(parts)})"
    if name in macros.declarators or re.fullmatch(_DECL_LIKE, name):
        names = [p for p in parts if _IDENT.fullmatch(p.strip())]
        return close + 1, "int " + ",".join(names or ["_"]) + newlines(raw)
    return end, name


def _is_export_like(name: str) -> bool:
    return re.fullmatch(_EXPORT_LIKE, name) is not None


def _name_bitfield(match: re.Match[str]) -> str:
    indent, typ, rest = match.groups()
    return f"{indent}{typ} _{rest}"
