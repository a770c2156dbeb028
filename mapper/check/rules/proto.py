"""SM501 proto-rpc-unimplemented and SM502 proto-field-unknown: ``umd.proto`` vs the code.

Servicers are the Python classes deriving from ``<Service>Servicer`` (the class the generated
``*_pb2_grpc`` module defines). Field use is read conservatively: keyword arguments to a
message constructor called through a ``*_pb2`` module, and attributes read directly off the
request parameter of a servicer method, as ingest recorded them (:mod:`mapper.check.pyfacts`);
nothing is parsed again.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from mapper.check.facts import Facts
from mapper.check.finding import Finding, Policy, RuleInfo, Severity
from mapper.check.pyfacts import Servicer, message_uses, servicers
from mapper.check.registry import Rule
from mapper.ingest.code import ParsedFile
from mapper.model import Language, Location, Symbol, SymbolKind


def _map_protos(facts: Facts) -> list[Symbol]:
    """Symbols of the protos under the contracts folder (all protos when none is there)."""
    folder = facts.config.contracts.rstrip("/") + "/"
    syms = list(facts.proto_symbols())
    mine = [s for s in syms if s.location.path.startswith(folder)]
    return mine or syms


def _derives_servicer(parsed: ParsedFile) -> bool:
    """Whether a class of the file names a ``*Servicer`` base (from the stored parse)."""
    return any(b.rpartition(".")[2].endswith("Servicer") for _, bs in parsed.bases for b in bs)


def _imports_pb2(parsed: ParsedFile) -> bool:
    """Whether the file imports a generated ``*_pb2`` module (from the stored parse)."""
    return any(target.rpartition(".")[2].endswith("_pb2") for _, target in parsed.imports)


def _all_servicers(facts: Facts) -> list[Servicer]:
    return [
        s
        for _, _, parsed in facts.layer_files(Language.PYTHON)
        if _derives_servicer(parsed)
        for s in servicers(parsed)
    ]


def _unimplemented(facts: Facts) -> Iterator[Finding]:
    syms = _map_protos(facts)
    found = _all_servicers(facts)
    for service in (s for s in syms if s.kind is SymbolKind.SERVICE):
        short = service.qualname.rsplit(".", 1)[-1]
        impls = [s for s in found if s.service == short]
        prefix = service.qualname + "."
        rpcs = [s for s in syms if s.kind is SymbolKind.RPC and s.qualname.startswith(prefix)]
        layer = facts.config.layer_of(impls[0].path) if impls else None
        for rpc in rpcs:
            name = rpc.qualname.rsplit(".", 1)[-1]
            if any(m.name == name for impl in impls for m in impl.methods):
                continue
            impl = impls[0] if impls else None
            where = (
                "no servicer class derives from " + f"{short}Servicer"
                if impl is None
                else (f"servicer {impl.name} has no method {name}")
            )
            yield SM501.finding(
                f"rpc {short}.{name} has no server implementation: {where}",
                subject=f"{short}.{name}",
                layer=layer,
                code=Location(impl.path, impl.line) if impl else None,
                code_end=impl.end_line if impl else None,
                map_loc=rpc.location,
                fix=f"implement {name}(self, request, context) on the servicer, or remove "
                f"the rpc from {rpc.location.path} (a breaking change: bump the package version)",
            )


def _fields(syms: list[Symbol]) -> dict[str, tuple[Symbol, dict[str, Symbol]]]:
    """Message name (without package, nested as Outer.Inner) → (message, its fields)."""
    messages = {s.qualname: s for s in syms if s.kind is SymbolKind.MESSAGE}
    out: dict[str, tuple[Symbol, dict[str, Symbol]]] = {}
    pkgs = {q.rsplit(".", 1)[0] for q in messages}
    for qual, msg in messages.items():
        fields = {
            s.qualname.rsplit(".", 1)[-1]: s
            for s in syms
            if s.kind is SymbolKind.FIELD and s.qualname.rsplit(".", 1)[0] == qual
        }
        short = qual
        for pkg in sorted(pkgs, key=len, reverse=True):
            if pkg and qual.startswith(pkg + ".") and pkg not in messages:
                short = qual[len(pkg) + 1 :]
                break
        out[short] = (msg, fields)
    return out


def _unknown_fields(facts: Facts) -> Iterator[Finding]:
    syms = _map_protos(facts)
    messages = _fields(syms)
    if not messages:
        return
    rpcs = {s.qualname.rsplit(".", 1)[-1]: s for s in syms if s.kind is SymbolKind.RPC}
    for path, layer, parsed in facts.layer_files(Language.PYTHON):
        uses: list[tuple[str, str, int]] = []
        for use in message_uses(parsed) if _imports_pb2(parsed) else ():
            uses.append((use.message, use.keyword, use.line))
        for impl in servicers(parsed) if _derives_servicer(parsed) else ():
            for method in impl.methods:
                rpc = rpcs.get(method.name)
                sig = rpc.signature if rpc else None
                if sig is None or not sig.params or not sig.params[0].type:
                    continue
                if sig.params[0].type.startswith("stream "):
                    continue  # a request iterator, not a message
                req = sig.params[0].type.split()[-1]
                uses += [(_short_of(req, messages), attr, line) for attr, line in method.reads]
        for message, field, line in uses:
            entry = messages.get(message)
            if entry is None or field in entry[1]:
                continue
            msg, fields = entry
            end = max([f.location.line or 0 for f in fields.values()] + [msg.location.line or 0])
            yield SM502.finding(
                f"the code uses field {field!r} of message {message}, which the proto lacks",
                subject=f"{path}:{message}.{field}",
                layer=layer,
                code=Location(path, line),
                map_loc=msg.location,
                map_end=end,
                fix=f"add `{field}` to message {message} in {msg.location.path} with a new "
                "field number (compatible), or stop using it in the code",
            )


def _short_of(qualname: str, messages: Mapping[str, object]) -> str:
    return next((k for k in messages if qualname == k or qualname.endswith("." + k)), qualname)


SM501 = Rule(
    RuleInfo(
        "SM501",
        "proto-rpc-unimplemented",
        Severity.ERROR,
        Policy.HISTORY,
        "An rpc of a service in the contract proto has no server implementation.",
        "Implement the rpc on the servicer class, or remove it from the proto.",
    ),
    _unimplemented,
)
SM502 = Rule(
    RuleInfo(
        "SM502",
        "proto-field-unknown",
        Severity.ERROR,
        Policy.HISTORY,
        "The code uses a message field that the contract proto does not declare.",
        "Add the field to the message (new field number), or stop using it.",
    ),
    _unknown_fields,
)
RULES = (SM501, SM502)
