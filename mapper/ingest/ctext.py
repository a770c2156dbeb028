"""Lexical helpers over C/C++/CUDA source text, used before tree-sitter sees it: directive
lines, a macro call's top-level arguments, and the first branch of each conditional. Every
helper keeps line positions (what it blanks becomes empty lines)."""

from __future__ import annotations

import re

_CONDITIONAL = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")


def first_branches(source: bytes) -> bytes:
    """``source`` with only the first branch of each ``#if``/``#ifdef`` kept (``#if 0`` blocks
    and every ``#elif``/``#else`` branch become blank lines, as do the directives themselves).

    For code whose conditionals cut through an expression or an initializer, which
    tree-sitter cannot parse with both branches present; lines stay where they are.
    """
    lines = source.decode("utf-8", errors="replace").split("\n")
    out: list[str] = []
    stack: list[bool] = []  # per open conditional: is the current branch kept?
    continued = False
    for raw in lines:
        if continued:  # a continuation line of a directive
            continued = raw.rstrip().endswith("\\")
            out.append("")
            continue
        match = _CONDITIONAL.match(raw)
        if match is None:
            out.append(raw if all(stack) else "")
            continue
        continued = raw.rstrip().endswith("\\")
        word, rest = match.groups()
        if word in ("if", "ifdef", "ifndef"):
            stack.append(not (word == "if" and rest.strip() in ("0", "(0)")))
        elif word in ("elif", "else") and stack:
            stack[-1] = False
        elif word == "endif" and stack:
            stack.pop()
        out.append("")
    return "\n".join(out).encode("utf-8")


def in_directive(text: str, start: int) -> bool:
    """Whether ``start`` lies in a ``#`` directive, continuation lines included (macro
    definitions keep their text)."""
    line_start = text.rfind("\n", 0, start) + 1
    while line_start > 1 and text[line_start - 2] == "\\":
        line_start = text.rfind("\n", 0, line_start - 1) + 1
    return text[line_start:start].lstrip().startswith("#")


def call_args(text: str, end: int) -> tuple[int, list[str]] | None:
    """(index of the closing paren, the top-level arguments) when ``(`` follows ``end``."""
    i = end
    while i < len(text) and text[i] in " \t":
        i += 1
    if i >= len(text) or text[i] != "(":
        return None
    depth, parts, current_start = 0, [], i + 1
    j = i
    while j < len(text):
        ch = text[j]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                parts.append(text[current_start:j])
                return j, parts
        elif ch == "," and depth == 1:
            parts.append(text[current_start:j])
            current_start = j + 1
        elif ch in "\"'":
            j = skip_literal(text, j)
        j += 1
    return None


def skip_literal(text: str, i: int) -> int:
    quote, j = text[i], i + 1
    while j < len(text) and text[j] != quote and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    return j


def newlines(raw: str) -> str:
    return "\n" * raw.count("\n")
