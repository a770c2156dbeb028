"""What a drafted contract may say from the provider's code: error codes and blocking calls.

For each discovered interface, the bodies of its providing functions (the definition and the
providers :mod:`mapper.ingest.discover` records: an ioctl's dispatched handler, a Python
function) and of the functions they call directly **within the same file** are read line by
line, comments left out, and matched against two small documented pattern lists:

errors seen
    C: a negative errno returned or assigned (``return -EINVAL;``, ``err = -ESRCH;``, either
    branch of ``? … :``);
    Python: ``raise X(...)`` (the type ``X``); both: an error enum member returned
    (``return Status.ERROR_TIMEOUT``, ``return HIP_ERROR_INVALID``: a name with ``ERR``,
    ``FAIL`` or ``INVALID`` in capitals).
blocking calls seen
    C: ``wait_event*``, ``wait_for_completion*``, ``*_wait*`` (``dma_fence_wait``, …),
    ``schedule_timeout*``, ``mutex_lock*``, ``down_read``/``down_write``/``down_interruptible``,
    ``msleep``, ``ssleep``, ``usleep_range``, ``poll``; Python: ``.wait(``, ``.result(``,
    ``.join(``, ``time.sleep(``, ``select.select(``/``select.poll(``.

Errors passed on
    C error codes often reach the caller only as a result passed on from a call into another
    file: ``return helper(...);``, or ``ret = helper(...);`` with ``return ret;`` in the same
    body (after ``if (ret)`` or a ``goto``). Such a call is followed through the map's call
    edges into the callee's body, in any file of the same layer, up to :data:`DEPTH` calls
    deep; the callee's error codes count, each with the chain of call sites that passes it
    on (``-ENOSPC at q.c:126 via pqm_create_queue (chardev.c:92)``). Calls through a
    function-pointer slot are not followed (the slot has no body).

Every item carries its ``path:line``; each error code is listed once, at its first site (the
provider's own before those passed on, shorter chains first). Nothing else is inferred: who
waits on what stays a question for a person (seed 003 §2.2).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mapper.graph import MapGraph
from mapper.model import EdgeKind, NodeKind

_ERRNO = re.compile(r"\breturn\s+-(E[A-Z0-9]+)\b|\b\w+\s*=\s*-(E[A-Z0-9]+)\s*;")
_RESULT = re.compile(r"\breturn\b|[^=!<>]=(?!=)")
_CHOICE = re.compile(r"[?:]\s*-(E[A-Z0-9]+)\b")
_RAISE = re.compile(r"^\s*raise\s+([A-Za-z_][\w.]*)")
_ENUM = re.compile(  # not a call: `return PTR_ERR(p);` passes an errno on, it names none
    r"\breturn\s+((?:[A-Za-z_]\w*\.)*[A-Z0-9_]*(?:ERR|FAIL|INVALID)[A-Z0-9_]*)\b(?!\s*\()"
)
_C_BLOCKING = re.compile(
    r"\b(wait_event\w*|wait_for_completion\w*|\w+_wait\w*|schedule_timeout\w*|mutex_lock\w*"
    r"|down_(?:read|write|interruptible|killable)\w*|msleep\w*|ssleep|usleep_range|poll)\s*\("
)
_PY_BLOCKING = re.compile(r"(\.(?:wait|result|join)|\btime\.sleep|\bselect\.(?:select|poll))\s*\(")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_RETURN_CALL = re.compile(r"\breturn\s+([A-Za-z_]\w*)\s*\(")
_ASSIGN_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*=\s*([A-Za-z_]\w*)\s*\(")
_RETURN_NAME = re.compile(r"\breturn\s+([A-Za-z_]\w*)\s*;")
_FUNCTIONS = ("function", "method", "kernel")
#: how many calls deep a passed-on result is followed from a providing function
DEPTH = 3
#: the calls that pass an error code on: (callee name, ``path:line`` of the call), outermost first
_Chain = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Seen:
    """One error code or blocking call the code shows, where; ``via`` is the chain of calls
    (callee name, ``path:line`` of the call) that passes an error code on to the provider."""

    name: str
    path: str
    line: int
    via: _Chain = ()

    def __str__(self) -> str:
        chain = " → ".join(f"{callee} ({site})" for callee, site in self.via)
        return f"{self.name} at {self.path}:{self.line}" + (f" via {chain}" if chain else "")


@dataclass(frozen=True, slots=True)
class CodeEvidence:
    errors: tuple[Seen, ...]
    blocking: tuple[Seen, ...]
    bodies: int = 0  # function bodies read: 0 when no provider is a function (a constant, …)

    @property
    def passed_on(self) -> bool:
        """Whether an error code comes from a callee whose result the provider passes on."""
        return any(e.via for e in self.errors)


class EvidenceReader:
    """Reads provider bodies from ``root``; one instance per drafting run (files cached)."""

    def __init__(self, graph: MapGraph, root: Path, depth: int = DEPTH) -> None:
        self._graph = graph
        self._root = root
        self._depth = depth
        self._lines: dict[str, list[str]] = {}
        self._defined: dict[str, dict[str, tuple[int, int]]] = {}
        for _, data in graph.nodes(NodeKind.SYMBOL):
            if data.get("symbol_kind") in _FUNCTIONS and data.get("end_line"):
                spans = self._defined.setdefault(str(data["path"]), {})
                name = str(data["name"]).rpartition(".")[2]  # Python names are qualified
                spans.setdefault(name, (int(data["line"]), int(data["end_line"])))

    def evidence(self, interface: Mapping[str, Any]) -> CodeEvidence:
        """Errors and blocking calls in the interface's providing functions and their direct
        callees in the same file, each once, in file order."""
        bodies: dict[tuple[str, int, int], None] = {}
        for node_id in self._providers(interface):
            data = self._graph.get(node_id)
            if not data or data.get("symbol_kind") not in _FUNCTIONS or not data.get("end_line"):
                continue
            path, span = str(data["path"]), (int(data["line"]), int(data["end_line"]))
            bodies[(path, *span)] = None
            own = str(data["name"]).rpartition(".")[2]
            for callee in self._callees(path, span, own):
                bodies[(path, *callee)] = None
        errors: list[Seen] = []
        blocking: list[Seen] = []
        for path, start, end in sorted(bodies):
            python = path.endswith(".py")
            for number, text in self._body(path, start, end):
                errors.extend(Seen(n, path, number) for n in _errors(text, python))
                pattern = _PY_BLOCKING if python else _C_BLOCKING
                blocking.extend(Seen(m.group(1), path, number) for m in pattern.finditer(text))
        followed, callees = self._passed_on(self._providers(interface))
        errors.extend(followed)
        return CodeEvidence(_once(errors), _once(blocking), len(bodies) + callees)

    def _providers(self, interface: Mapping[str, Any]) -> list[str]:
        found = [str(p[0]) for p in interface.get("providers") or []]
        return [str(interface["definition"]), *found]

    def _passed_on(self, providers: list[str]) -> tuple[list[Seen], int]:
        """Error codes of C callees whose result a provider passes on, breadth first, and the
        number of callee bodies read."""
        out: list[Seen] = []
        frontier: list[tuple[str, _Chain]] = [
            (node, ()) for node in dict.fromkeys(providers) if self._c_body(node)
        ]
        explored = {node for node, _ in frontier}
        providers_read = set(explored)
        for _ in range(self._depth):
            following: list[tuple[str, _Chain]] = []
            for node, via in frontier:
                path, start, end = self._c_body(node) or ("", 0, 0)
                for name, line in _results_passed_on(self._body(path, start, end)):
                    for callee in self._resolved(node, name):
                        if callee in explored:
                            continue
                        explored.add(callee)
                        chain = (*via, (name, f"{path}:{line}"))
                        cpath, cstart, cend = self._c_body(callee) or ("", 0, 0)
                        for number, text in self._body(cpath, cstart, cend):
                            out.extend(Seen(n, cpath, number, chain) for n in _errors(text, False))
                        following.append((callee, chain))
            frontier = following
        return out, len(explored) - len(providers_read)

    def _c_body(self, node: str) -> tuple[str, int, int] | None:
        data = self._graph.get(node)
        if not data or data.get("symbol_kind") not in _FUNCTIONS or not data.get("end_line"):
            return None
        path = str(data["path"])
        return None if path.endswith(".py") else (path, int(data["line"]), int(data["end_line"]))

    def _resolved(self, caller: str, name: str) -> list[str]:
        """The functions named ``name`` that ``caller`` calls on the map, in its own layer."""
        layer = self._graph.node(caller).get("layer")
        return sorted(
            target
            for target, _ in self._graph.out_edges(caller, EdgeKind.CALLS)
            if (data := self._graph.get(target))
            and data.get("layer") == layer
            and str(data.get("name", "")).rpartition(".")[2] == name
            and self._c_body(target)
        )

    def _callees(self, path: str, span: tuple[int, int], own: str) -> list[tuple[int, int]]:
        defined = self._defined.get(path, {})
        names = {m.group(1) for _, text in self._body(path, *span) for m in _CALL.finditer(text)}
        return [defined[n] for n in sorted(names) if n in defined and n != own]

    def _body(self, path: str, start: int, end: int) -> Iterable[tuple[int, str]]:
        if path not in self._lines:
            try:
                text = (self._root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            self._lines[path] = text.splitlines()
        lines = self._lines[path]
        python = path.endswith(".py")
        in_comment = False
        for number in range(start, min(end, len(lines)) + 1):
            text, in_comment = _code(lines[number - 1], python, in_comment)
            if text.strip():
                yield number, text


def _code(line: str, python: bool, in_comment: bool) -> tuple[str, bool]:
    """The line without comments (``#`` in Python; ``//`` and ``/* … */`` in C)."""
    if python:
        return line.split("#", 1)[0], False
    out = ""
    while line:
        if in_comment:
            end = line.find("*/")
            if end < 0:
                return out, True
            line, in_comment = line[end + 2 :], False
            continue
        start, slash = line.find("/*"), line.find("//")
        if slash >= 0 and (start < 0 or slash < start):
            return out + line[:slash], False
        if start < 0:
            return out + line, False
        out, line, in_comment = out + line[:start], line[start + 2 :], True
    return out, in_comment


def _results_passed_on(body: Iterable[tuple[int, str]]) -> list[tuple[str, int]]:
    """(callee name, line) of each call whose result the body returns: ``return f(...)``, or
    ``r = f(...)`` where the body also has ``return r;``."""
    lines = list(body)
    returned = {m.group(1) for _, text in lines for m in _RETURN_NAME.finditer(text)}
    out: list[tuple[str, int]] = []
    for number, text in lines:
        out.extend((m.group(1), number) for m in _RETURN_CALL.finditer(text))
        out.extend(
            (m.group(2), number) for m in _ASSIGN_CALL.finditer(text) if m.group(1) in returned
        )
    return out


def _errors(text: str, python: bool) -> list[str]:
    found = [] if python else [f"-{m.group(1) or m.group(2)}" for m in _ERRNO.finditer(text)]
    if not python and (result := _RESULT.search(text)):  # `return ok ? 0 : -EFAULT;`
        found.extend(f"-{m.group(1)}" for m in _CHOICE.finditer(text, result.end()))
    if python and (raised := _RAISE.match(text)):
        found.append(raised.group(1))
    found.extend(m.group(1) for m in _ENUM.finditer(text))
    return found


def _once(items: list[Seen]) -> tuple[Seen, ...]:
    """Each name once, at its first site."""
    seen: dict[str, Seen] = {}
    for item in items:
        seen.setdefault(item.name, item)
    return tuple(seen.values())
