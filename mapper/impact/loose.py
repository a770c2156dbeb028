"""Call sites the map could not resolve, matched to a changed method by its name.

The ingest keeps each ``recv.method(…)`` call on a receiver of unknown type (an untyped
``ctx`` parameter, a pytest fixture) on its file node (``loose_calls``). A changed method
``C.m`` reaches such a call as lower-confidence evidence, with the reason in the hop:

- every class on the map defining ``m`` is in ``C``'s hierarchy (its bases and subclasses):
  whatever the receiver is, a call of ``m`` lands in that family (confidence 0.6);
- else the receiver is named like a class of the family that defines ``m`` and like none
  outside it (``ctx`` for ``Context``; confidence 0.5);
- else, in conservative mode only, the method name alone (confidence 0.3).
"""

from __future__ import annotations

from dataclasses import dataclass

from mapper.impact.mapview import EvidenceKind, MapView, Node
from mapper.impact.records import Hop
from mapper.ingest.receivers import named_like
from mapper.model import EdgeKind, NodeKind


@dataclass(frozen=True, slots=True)
class LooseCall:
    caller: str
    receiver: str
    path: str
    line: int


class LooseIndex:
    """Loose calls by method name, and the classes defining each method name, of one map."""

    def __init__(self, view: MapView) -> None:
        self.view = view
        self.calls: dict[str, list[LooseCall]] = {}
        self.owners: dict[str, set[str]] = {}
        for file in view.nodes(NodeKind.FILE):
            for caller, receiver, method, line in file.get("loose_calls") or ():
                call = LooseCall(caller, receiver, file.path or "", line)
                self.calls.setdefault(method, []).append(call)
        for sym in view.nodes(NodeKind.SYMBOL):
            if sym.get("symbol_kind") == "method":
                owner, _, name = sym.id.removeprefix("symbol:").rpartition(".")
                self.owners.setdefault(name, set()).add(owner)

    def family(self, cls: str) -> set[str]:
        """``cls`` with its bases and subclasses on the map, transitively."""
        seen, todo = {cls}, [cls]
        while todo:
            for edge in self.view.neighbours(f"symbol:{todo.pop()}", {EdgeKind.INHERITS}, "both"):
                for end in (edge.source, edge.target):
                    name = end.removeprefix("symbol:")
                    if end.startswith("symbol:") and name not in seen:
                        seen.add(name)
                        todo.append(name)
        return seen

    def hops(self, method: Node, conservative: bool) -> list[Hop]:
        """One backward ``calls`` hop per loose call ``method`` may be the target of."""
        qualname = method.id.removeprefix("symbol:")
        cls, _, name = qualname.rpartition(".")
        calls = self.calls.get(name)
        if method.get("symbol_kind") != "method" or not calls or not cls:
            return []
        family = self.family(cls)
        owners = self.owners.get(name, set())
        inside = sorted(owners & family) or [cls]
        outside = owners - family
        out: list[Hop] = []
        for call in calls:
            if not outside:
                conf = 0.6
                why = f"every class defining {name} is in {cls.rpartition('.')[2]}'s hierarchy"
            else:
                like = [c for c in inside if named_like(call.receiver, c)]
                if like and not any(named_like(call.receiver, c) for c in outside):
                    conf = 0.5
                    why = f"named like {like[0].rpartition('.')[2]}"
                elif conservative:
                    conf, why = 0.3, f"matched by the method name {name} alone"
                else:
                    continue
            detail = f"loose call: receiver `{call.receiver}` of unknown type; {why}"
            out.append(
                Hop(
                    call.caller,
                    method.id,
                    EdgeKind.CALLS.value,
                    EvidenceKind.CODE_REFERENCE,
                    call.path,
                    call.line,
                    conf,
                    False,
                    detail,
                )
            )
        return out


def loose_index(view: MapView) -> LooseIndex:
    """The view's index, built on first use and kept with the view."""
    found = view.cache.get("loose")
    if not isinstance(found, LooseIndex):
        found = LooseIndex(view)
        view.cache["loose"] = found
    return found
