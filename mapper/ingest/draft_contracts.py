"""Draft contracts from the discovered interfaces (``stackmap init --contracts``).

One contract per pair of adjacent layers whose upper layer uses the lower one: each interface
the code shows (``source`` discovered or both, see :mod:`mapper.ingest.discover`) becomes an
entry with what the code answers — its kind, its symbol (``path:NAME`` for C, so the entry
resolves to this very definition), the signature of a function or method, the argument struct
of an ioctl, who provides it and where it is used — and every semantic field the code cannot
answer left out and asked as an **open question** with the reason (seed 003 §2.2: collect,
don't invent). The code answers ``sync`` for a Python ``async def``, and ``errors`` when the
provider's code shows error codes (:mod:`mapper.ingest.draft_evidence`): written as drafted,
each with its ``path:line`` under ``evidence``. Blocking calls seen go under ``evidence`` too,
and the synchronisation question stays, its reason citing them. ``stackmap check`` reports
each open question as a hole (SM402) until the field is written.

The graph (and the sources under ``root``) in, YAML text per contract path out; writing is the
caller's job.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import yaml

from mapper.config import StackmapConfig
from mapper.graph import MapGraph
from mapper.ingest import draft_uses
from mapper.ingest.draft_evidence import CodeEvidence, EvidenceReader
from mapper.ingest.draft_uses import Use
from mapper.model import NodeKind

#: symbol kind on the map → contract interface kind
KIND_OF = {
    "function": "function",
    "kernel": "function",
    "method": "method",
    "class": "class",
    "struct": "struct",
    "enum": "enum",
    "ioctl": "ioctl",
    "constant": "constant",
    "macro": "constant",
    "field": "function",  # a function-pointer slot: a function the lower layer fills
    "rpc": "rpc",
    "message": "message",
}
_WAITS = re.compile(r"fence|event|callback|wait|sem|signal|timeline|sync", re.I)
_POINTER = re.compile(r"\*|\bptr\b|buffer|bytes|memoryview|ndarray|void_p", re.I)
_SHOWN = 5


def draft_contracts(
    graph: MapGraph, config: StackmapConfig, root: Path, uses: Sequence[Use] = ()
) -> dict[str, str]:
    """Contract path (under ``config.contracts``) → drafted YAML, one per adjacent pair with
    discovered interfaces or undeclared ``uses`` (:mod:`mapper.ingest.draft_uses`: what the
    layer check sees that discovery does not); pairs that already have a contract file on the
    map are left out. Provider bodies are read from ``root`` for the error codes and blocking
    calls they show."""
    allowed = set(pairwise(layer.id for layer in config.layers))
    existing = {
        (d.get("upper"), d.get("lower")) for _, d in graph.nodes(NodeKind.FILE) if d.get("contract")
    }
    pairs: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for _, data in sorted(graph.nodes(NodeKind.INTERFACE)):
        pair = (data.get("upper"), data.get("lower"))
        if data.get("source") == "discovered" and pair in allowed and pair not in existing:
            pairs[pair].append(data)
    extra: dict[tuple[str, str], list[Use]] = defaultdict(list)
    for use in uses:
        if (use.upper, use.lower) in allowed and (use.upper, use.lower) not in existing:
            extra[(use.upper, use.lower)].append(use)
    reader = EvidenceReader(graph, root)
    return {
        f"{config.contracts}/{upper}_{lower}.yaml": _contract(
            reader, graph, upper, lower, pairs[(upper, lower)], extra[(upper, lower)]
        )
        for upper, lower in sorted(set(pairs) | set(extra))
    }


def _contract(
    reader: EvidenceReader,
    graph: MapGraph,
    upper: str,
    lower: str,
    interfaces: list[Mapping[str, Any]],
    uses: list[Use],
) -> str:
    head = (
        f"# Drafted by `stackmap init --contracts` from what {upper} uses of {lower} in the\n"
        "# code. Fields the code answers are filled in; every field it cannot answer is an\n"
        "# open question with its reason, a hole in `stackmap check` (SM402) until written.\n"
    )
    entries = [_entry(graph, upper, lower, d, reader.evidence(d)) for d in interfaces]
    nothing = CodeEvidence((), ())
    for use in draft_uses.undeclared(uses, [e["symbol"] for e in entries]):
        sites = {"consumers": [[None, path, line] for path, line in use.sites]}
        entries.append(draft_uses.entry(use, _questions(upper, lower, sites, {}, False, nothing)))
    data = {
        "contract": f"{upper}_{lower}",
        "schema": 1,
        "version": "0.1.0",
        "upper": upper,
        "lower": lower,
        "description": f"What {upper} uses of {lower}, as the code shows it: "
        f"{len(entries)} interface(s). Drafted; review every entry.",
        "interfaces": entries,
    }
    return head + yaml.safe_dump(data, sort_keys=False, width=96, allow_unicode=True)


def _entry(
    graph: MapGraph, upper: str, lower: str, data: Mapping[str, Any], seen: CodeEvidence
) -> dict[str, Any]:
    symbol = graph.node(data["definition"])
    kind = KIND_OF.get(str(data.get("interface_kind")), "function")
    name = str(data.get("symbol") or data["name"])
    written = name if symbol.get("language") == "python" else f"{data.get('path')}:{name}"
    entry: dict[str, Any] = {
        "id": data["name"],
        "kind": kind,
        "symbol": written,
    }
    signature = _signature(symbol) if kind in ("function", "method") else None
    if signature is not None:
        entry["signature"] = signature
    if symbol.get("is_async"):
        entry["sync"] = f"async (`async def` at {symbol.get('path')}:{symbol.get('line')})"
    if seen.errors:
        passed = " or passed on to it by a function it calls" if seen.passed_on else ""
        chains = ", with the call chain" if seen.passed_on else ""
        entry["errors"] = (
            f"Drafted from the code, review: {', '.join(e.name for e in seen.errors)} "
            f"reported by the provider{passed} (evidence.errors{chains}); whether others are "
            "possible, and whether they come at once or later, the code does not say."
        )
    entry["description"] = _facts(data, symbol)
    evidence = {
        field: [str(item) for item in items]
        for field, items in (("errors", seen.errors), ("synchronization", seen.blocking))
        if items
    }
    if evidence:
        entry["evidence"] = evidence
    questions = _questions(upper, lower, data, symbol, "sync" in entry, seen)
    entry["open_questions"] = [q for q in questions if q["field"] not in entry]
    return entry


def _signature(symbol: Mapping[str, Any]) -> dict[str, Any] | None:
    params = symbol.get("params")
    if params is None:
        return None
    out: list[dict[str, Any]] = []
    for name, type_, default, kind in params:
        if name in ("self", "cls"):
            continue
        item: dict[str, Any] = {"name": name}
        if type_:
            item["type"] = type_
        if default is not None:
            item["default"] = default
        if kind and kind != "positional":
            item["kind"] = kind
        out.append(item)
    return {"params": out, "returns": symbol.get("returns")}


def _sites(sites: list[list[Any]]) -> str:
    shown = ", ".join(f"{path}:{line}" for _, path, line in sites[:_SHOWN])
    more = f" and {len(sites) - _SHOWN} more" if len(sites) > _SHOWN else ""
    return shown + more


def _facts(data: Mapping[str, Any], symbol: Mapping[str, Any]) -> str:
    """What the code shows: definition, providers, argument struct, use sites."""
    providers = data.get("providers") or []
    consumers = data.get("consumers") or []
    text = f"{data.get('interface_kind')} {data.get('symbol')}"
    if symbol.get("signature"):
        text += f" `{symbol['signature']}`"
    text += f", defined at {data.get('path')}:{data.get('line')}"
    if symbol.get("arg_struct"):
        text += f"; argument struct {symbol['arg_struct']}"
    others = [p for p in providers if p[0] != data.get("definition")]
    if others:
        text += f"; provided by {', '.join(p[0].rpartition(':')[2] for p in others)} ("
        text += f"{_sites(others)})"
    return text + f"; used at {len(consumers)} site(s): {_sites(consumers)}."


def _questions(
    upper: str,
    lower: str,
    data: Mapping[str, Any],
    symbol: Mapping[str, Any],
    sync_known: bool,
    seen: CodeEvidence,
) -> list[dict[str, str]]:
    uses = len(data.get("consumers") or [])
    params = [p[0] for p in symbol.get("params") or [] if p[0] not in ("self", "cls")]
    typed = " ".join(f"{p[0]} {p[1] or ''}" for p in symbol.get("params") or [])
    waits = sorted({m.group(0).lower() for m in _WAITS.finditer(typed)})
    carried = symbol.get("arg_struct") or ", ".join(
        p[0] for p in symbol.get("params") or [] if _POINTER.search(f"{p[0]} {p[1] or ''}")
    )
    out = []
    if not sync_known:
        out.append(
            {
                "field": "sync",
                "question": f"Sync or async: does {upper} get control back when {lower} has "
                "done the work, or when it has queued it?",
                "reason": f"the code shows the call at {uses} use site(s), not whether the "
                "work completes before it returns",
            }
        )
    out.append(
        {
            "field": "synchronization",
            "question": "Who waits on what, and who is responsible for synchronisation "
            "(for example freeing memory that in-flight work still uses)?",
            "reason": _sync_reason(waits, seen),
        }
    )
    out.append(
        {
            "field": "memory",
            "question": "Who owns the memory that crosses this interface, and for how long "
            "(who allocates, who frees, may the caller reuse it on return)?",
            "reason": (
                f"{carried} crosses the boundary; the code does not say who owns it"
                if carried
                else (
                    f"parameters {', '.join(params)} cross the boundary; ownership is not "
                    "written anywhere"
                    if params
                    else "nothing in the code states an ownership rule"
                )
            ),
        }
    )
    out.append(
        {
            "field": "errors",
            "question": "Which errors can it report, and are they returned at once or "
            "delivered later (through a fence, a callback, the next call)?",
            "reason": (
                f"the {seen.bodies} providing function body(ies) read return no negative errno "
                "or error enum member and raise nothing"
                if seen.bodies
                else "no providing function to read; the map holds no error values or "
                "exceptions tied to it"
            ),
        }
    )
    return out


def _sync_reason(waits: list[str], seen: CodeEvidence) -> str:
    if seen.blocking:
        calls = "; ".join(str(item) for item in seen.blocking)
        return f"the provider blocks ({calls}), but the code does not say who waits on what"
    if waits:
        return f"its parameters name {', '.join(waits)}, but not who waits on it"
    return "no fence, event, callback or wait appears in its signature or uses"
