"""The rule families, one module each; :func:`register_all` registers every rule explicitly."""

from __future__ import annotations

from mapper.check import registry


def register_all() -> None:
    """Register every built-in rule once (idempotent)."""
    if registry.all_rules():
        return
    from mapper.check.rules import (
        constants,
        dependencies,
        docs,
        interfaces,
        layering,
        proto,
        semantics,
    )

    for family in (interfaces, layering, docs, dependencies, semantics, proto, constants):
        for rule in family.RULES:
            registry.register(rule)
