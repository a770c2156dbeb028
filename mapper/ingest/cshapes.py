"""Macro uses recognised by their shape, rewritten before a C/C++/CUDA file is parsed.

:mod:`mapper.ingest.cmacros` rewrites macros it knows by name (built-in sets and ``[c]``
configuration). Libraries define many more, but the ways a macro can sit in code that a
parser without a preprocessor cannot read are few. :func:`rewrite` recognises those shapes,
whatever the macro is called, and, like ``cmacros``, **keeps every line where it is** (a
rewrite never adds or removes a newline; columns may move):

- **string macros** — an upper-case name written next to a string literal is a string:
  ``"%" PRId64 "\\n"`` and ``"failed to initialise " BACKEND_NAME ": %s"`` read ``""`` there;
- **declaration wrappers** — a macro at the start of a line whose first argument is a
  declaration with a parameter list and whose last argument is a string (a deprecation
  message): ``DEPRECATED(int f(int x), "use g");`` becomes ``int f(int x);``;
- **definition macros** — a line that is only an upper-case macro call with no ``;`` after it
  (``DEFINE_OP_VARIANTS(add, float)``, ``SCORE_IMPL(cpu_score)``, an attribute line such as
  ``ATTRIBUTE_FORMAT(2, 3)`` above a prototype, a class-body ``RTTI("Name")``) expands to whole
  definitions or to nothing the map can read: the line is blanked;
- **statement macros** — a line that is only an upper-case name between two statements
  (``TENSOR_BINARY_OP_LOCALS`` declaring locals) is blanked;
- **type arguments of macro calls** — an argument of an upper-case macro call that is only a
  built-in type (``LOCALS(int64_t, ne, src, ne);``, ``LAUNCH(float, half2);``) reads ``0``.

A definition or statement macro followed by ``{``, an operator, ``,`` or ``;`` is left alone: it
is then part of an expression, a loop header (``cmacros``) or a function definition.
"""

from __future__ import annotations

import re

from mapper.ingest import ctext


def _words(names: str) -> frozenset[str]:
    return frozenset(names.split())


_UPPER = r"[A-Z_][A-Z0-9_]*[A-Z0-9]"
_NAMED = r"[A-Z_][A-Z][A-Za-z0-9_]*"  # PRId64 and BACKEND_NAME alike
# the quote before the name is matched, not looked behind for: a pattern that starts with a
# literal is only tried where the literal is (0.05 s against 0.42 s on llama.cpp's sources)
_STRING_MACRO = re.compile(r'(")(\s*)(' + _NAMED + r')(?=\s*["),])')
_STRING_BEFORE = re.compile(r"([(,]\s*)(" + _NAMED + r')(?=\s*")')
_LINE_CALL = re.compile(r"(?m)^([ \t]*(?:extern[ \t]+)?)(" + _UPPER + r")(?=[ \t]*\()")
_CROSSES = re.compile(r"\n[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|else|endif)\b")
_INSTANTIATION = re.compile(r"(?m)^[ \t]*template[ \t]+(?:struct|class)[ \t]+[^;{}()\n]*;")
_BRACE_DEFAULT = re.compile(r"=\s*\{\s*\}(?=\s*[,)])")
_KEYWORD_TYPE = (
    r"(?:void|bool|char|short|int|long|float|double|signed|unsigned|const|static|inline|"
    r"extern|struct|union|enum|volatile)\b"
)
# an upper-case annotation before a built-in type or storage class (``static NOINLINE void``)
# (each lookbehind that keeps a match off a word's middle follows the match's first character,
# so the regex engine scans only the places where that character occurs)
_ANNOTATION_BEFORE = re.compile(
    r"([A-Z_](?<![\w#][A-Z_])[A-Z0-9_]*[A-Z0-9])([ \t]+)(?=" + _KEYWORD_TYPE + ")"
)
# between a type and a declarator: ``atomic_int CACHE_ALIGN n;``
_ANNOTATION_BETWEEN = re.compile(
    r"(?m)^([ \t]*[A-Za-z_]\w*[ \t]+)(" + _UPPER + r")([ \t]+[A-Za-z_]\w*[ \t]*[;=\[])"
)
# a lower-case ``__name__`` annotation before a declaration (``static __dpct_inline__ float``)
_DUNDER = re.compile(r"(__(?<![\w#]__)[a-z][a-z0-9_]*[a-z0-9]__)([ \t]+)(?=[A-Za-z_])")
_DUNDER_KEEP = _words(
    "__attribute__ __typeof__ __alignof__ __asm__ __volatile__ __signed__ __restrict__ "
    "__inline__ __const__ __extension__ __label__ __func__ __real__ __imag__ __global__"
)
_DECL_KEYWORDS = _words(
    "struct union enum class const volatile return case typedef unsigned signed static "
    "extern inline register goto sizeof new delete throw else do"
)
_LINE_NAME = re.compile(r"(?m)^([ \t]*)(" + _UPPER + r")([ \t]*(?://[^\n]*)?)$")
_BUILTIN_TYPE = re.compile(
    r"\s*(?:(?:const|unsigned|signed|short|long)\s+)*(?:void|bool|_Bool|char|short|int|long|"
    r"float|double|half|size_t|ssize_t|ptrdiff_t|u?intptr_t|u?int(?:8|16|32|64)_t)\s*"
)
_COMMENT = re.compile(r"\s*(?://[^\n]*|/\*.*?\*/)?\s*", re.S)
# after a definition or statement macro, these begin a statement or declaration of their own
_OPERATOR_NEXT = frozenset("{;,()=+-*/%.?:&|^<>[\"'!")


def rewrite(source: bytes) -> bytes:
    """``source`` with the shapes above rewritten; every newline stays where it was."""
    text = source.decode("utf-8", errors="replace")
    text = _STRING_MACRO.sub(_empty_string, text)
    if "template" in text:  # the substring test spares C files the scan of every line start
        text = _INSTANTIATION.sub(lambda m: ctext.newlines(m.group(0)), text)
    text = _BRACE_DEFAULT.sub(lambda m: "= 0" + ctext.newlines(m.group(0)), text)
    text = _ANNOTATION_BEFORE.sub(_annotation, text)
    text = _ANNOTATION_BETWEEN.sub(_between, text)
    text = _DUNDER.sub(_dunder, text)
    text = _STRING_BEFORE.sub(lambda m: m.group(1) + '""', text)
    text = _line_calls(text)
    text = _LINE_NAME.sub(_statement_macro, text)
    return text.encode("utf-8")


def _annotation(match: re.Match[str]) -> str:
    return match.group(0) if ctext.in_directive(match.string, match.start()) else ""


def _between(match: re.Match[str]) -> str:
    first = match.group(1).split()[0]
    if first in _DECL_KEYWORDS or ctext.in_directive(match.string, match.start()):
        return match.group(0)
    return match.group(1) + match.group(3)


def _dunder(match: re.Match[str]) -> str:
    if match.group(1) in _DUNDER_KEEP or ctext.in_directive(match.string, match.start()):
        return match.group(0)
    return ""


def _empty_string(match: re.Match[str]) -> str:
    if ctext.in_directive(match.string, match.start(2)):
        return match.group(0)
    return match.group(1) + match.group(2) + '""'


def _line_calls(text: str) -> str:
    out: list[str] = []
    pos = 0
    for match in _LINE_CALL.finditer(text):
        start = match.start(1) if match.group(1).strip() else match.start(2)
        if start < pos or ctext.in_directive(text, start):
            continue
        args = ctext.call_args(text, match.end(2))
        if args is None:
            continue
        close, parts = args
        if _unbalanced(text, match.group(1), match.end(2), close):
            continue
        if match.group(1).strip():  # ``extern NAME(…);`` declares what the macro expands to
            following = _next_char(text, close + 1)
            replacement = ctext.newlines(text[start : close + 1]) if following == ";" else None
        else:
            replacement = _line_call(text, match.group(2), match.end(2), close, parts)
        if replacement is None:
            continue
        out.append(text[pos:start])
        out.append(replacement)
        pos = close + 1
    out.append(text[pos:])
    return "".join(out)


def _line_call(text: str, name: str, name_end: int, close: int, parts: list[str]) -> str | None:
    """What replaces ``name(…)`` (up to ``close``), or None to leave it."""
    raw = text[name_end : close + 1]
    following = _next_char(text, close + 1)
    wrapper = len(parts) >= 2 and _is_declaration(parts[0]) and _is_string(parts[-1])
    if wrapper and following == ";":
        return parts[0] + ctext.newlines("".join(parts[1:]))
    line_end = text.find("\n", close)
    rest = text[close + 1 : line_end if line_end >= 0 else len(text)]
    if _COMMENT.fullmatch(rest) and following not in _OPERATOR_NEXT:
        return ctext.newlines(name + raw)
    typed = [("0" + ctext.newlines(p)) if _BUILTIN_TYPE.fullmatch(p) else p for p in parts]
    if typed != parts:
        return f"{name}({','.join(typed)})"
    return None


def _statement_macro(match: re.Match[str]) -> str:
    text, start = match.string, match.start(2)
    if ctext.in_directive(text, start):
        return match.group(0)
    before = _previous_char(text, match.start())
    after = _next_char(text, match.end())
    if before in (";", "{", "}", "") and after not in _OPERATOR_NEXT - {"{"}:
        return match.group(1) + match.group(3)
    return match.group(0)


def _unbalanced(text: str, indent: str, start: int, close: int) -> bool:
    """Whether the "arguments" run past a directive or out of the block the call sits in: a
    parenthesis left open in the code as written (it happens, under ``#if 0``)."""
    if _CROSSES.search(text, start, close):
        return True
    width = len(indent.expandtabs(8))
    for line in text[start : close + 1].split("\n")[1:]:
        body = line.lstrip()
        if body.startswith("}") and len(line[: len(line) - len(body)].expandtabs(8)) < width:
            return True
    return False


def _is_declaration(arg: str) -> bool:
    head = arg.strip()
    return head.endswith(")") and "(" in head and re.match(r"[A-Za-z_]", head) is not None


def _is_string(arg: str) -> bool:
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", arg, flags=re.S)
    return re.fullmatch(r'\s*(?:"(?:[^"\\\n]|\\.)*"\s*)+', code) is not None


def _next_char(text: str, i: int) -> str:
    """The next character after ``i`` that is not blank, a comment or a directive line."""
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in " \t\r\n\\":
            i += 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif ch == "#" and text[text.rfind("\n", 0, i) + 1 : i].strip() == "":
            end = text.find("\n", i)
            while end > 0 and text[end - 1] == "\\":
                end = text.find("\n", end + 1)
            i = n if end < 0 else end
        else:
            return ch
    return ""


def _previous_char(text: str, i: int) -> str:
    """The last character before ``i`` that is not blank or in a ``//`` comment or directive."""
    while i > 0:
        line_start = text.rfind("\n", 0, i - 1) + 1
        line = text[line_start:i]
        code = line.split("//", 1)[0].rstrip()
        if code.lstrip().startswith("#") or code.rstrip().endswith("*/") or not code.strip():
            if code.rstrip().endswith("*/") and "/*" in code:
                code = code[: code.rfind("/*")].rstrip()
                if code.strip() and not code.lstrip().startswith("#"):
                    return code[-1]
            i = line_start
            continue
        return code[-1]
    return ""
