"""Receivers of unknown type: ``ctx.invoke()`` where nothing says what ``ctx`` is.

Two pieces the ingest and impact share:

- :func:`loose_call`: a Python call the resolver could not place, written ``recv.method(…)``
  on a receiver no import, class or annotation explains (``np.zeros`` is a library call, not
  a loose one): the ``(receiver, method)`` pair, recorded on the caller's file node as
  ``loose_calls`` so impact can match it by method name, as lower-confidence evidence.
- :func:`named_like`: whether a receiver's name is the conventional name of an object of a
  class: the class's last CamelCase word or a suffix of its words (``runner``/``clirunner``
  for ``CliRunner``), or an abbreviation of its last word keeping its first letter
  (``ctx``, ``cmd`` for ``Context``, ``Command``).
"""

from __future__ import annotations

import re
from typing import Any

from mapper.graph import MapGraph
from mapper.ingest.code import ParsedFile
from mapper.ingest.resolve import Resolver
from mapper.model import Language, Reference

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z]+")
_SELF = frozenset({"self", "cls", "super()"})
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
GUESS = 0.8  # a call resolved below this confidence was matched by name: still loose


def loose_call(ref: Reference, imported: frozenset[str] | set[str]) -> tuple[str, str] | None:
    """``(receiver, method)`` of an unresolved call ``… recv.method(…)``; None when the call
    has no receiver, the receiver is ``self``/``cls`` itself or a name an import binds."""
    target = ref.target
    if "(" in target or "[" in target:
        return None
    parts = target.split(".")
    if len(parts) < 2 or not all(_IDENT.match(p) for p in parts):
        return None
    head, receiver, method = parts[0], parts[-2], parts[-1]
    if head in imported or (len(parts) == 2 and head in _SELF):
        return None
    return receiver, method


def _words(class_name: str) -> list[str]:
    return [w.lower() for w in _CAMEL.findall(class_name)]


def named_like(receiver: str, class_name: str) -> bool:
    """Whether ``receiver`` is a conventional name for an instance of ``class_name``."""
    name = receiver.strip("_").lower().rstrip("0123456789")
    words = _words(class_name.rpartition(".")[2])
    if len(name) < 3 or not words:
        return False
    for cut in range(len(words)):
        if name == "".join(words[cut:]):
            return True
    last = words[-1]
    if name[0] != last[0] or len(name) >= len(last):
        return False
    rest = iter(last[1:])
    return all(ch in rest for ch in name[1:])


def record_loose_calls(graph: MapGraph, resolver: Resolver, pf: ParsedFile) -> None:
    """Put ``pf``'s loose calls of methods some class on the map defines (unresolved, or
    resolved only by the method's name, below :data:`GUESS`) on its file node:
    ``loose_calls``, a list of ``[caller node id, receiver, method, line]``; the caller is the
    enclosing definition (a test node in a test file) or the file itself."""
    if pf.language is not Language.PYTHON:
        return
    file_id = f"file:{pf.path}"
    if file_id not in graph:
        return
    imported = {alias for alias, _ in pf.imports}
    prefix = (pf.module + ".") if pf.module else ""
    loose: list[list[Any]] = []
    methods = resolver.methods
    for ref in pf.references:  # a call of a name no class defines is no loose call: skipped first
        if ref.kind != "call" or ref.target.rpartition(".")[2] not in methods:
            continue
        pair = loose_call(ref, imported)
        if pair is None:
            continue
        found = resolver.call(pf, ref)
        if found is not None and found[1] >= GUESS:
            continue  # resolved: a call edge says where it goes
        loose.append([_caller(graph, pf.path, prefix, ref.scope), *pair, ref.location.line])
    if loose:
        graph.put_node(file_id, {"loose_calls": loose})


def _caller(graph: MapGraph, path: str, prefix: str, scope: str | None) -> str:
    name = scope or ""
    while name:
        test = f"test:{path}::{name.removeprefix(prefix).replace('.', '::')}"
        for node_id in (test, f"symbol:{name}"):
            if node_id in graph:
                return node_id
        name = name.rpartition(".")[0]
    return f"file:{path}"
