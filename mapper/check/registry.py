"""The rule registry: every rule registers itself explicitly under a stable id.

A rule is a :class:`~mapper.check.finding.RuleInfo` plus a function from the collected
:class:`~mapper.check.facts.Facts` to findings. Unknown ids raise
:class:`~mapper.errors.UnknownNameError` listing the known ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mapper.check.finding import Finding, RuleInfo
from mapper.errors import UnknownNameError
from mapper.model import Location

if TYPE_CHECKING:
    from mapper.check.facts import Facts


@dataclass(frozen=True, slots=True)
class Rule:
    info: RuleInfo
    check: Callable[[Facts], Iterable[Finding]]

    def finding(
        self,
        message: str,
        *,
        subject: str,
        layer: str | None = None,
        code: Location | None = None,
        map_loc: Location | None = None,
        fix: str | None = None,
        code_end: int | None = None,
        map_end: int | None = None,
    ) -> Finding:
        """A finding of this rule at its default severity; ``fix`` defaults to the rule's."""
        return Finding(
            rule=self.info.id,
            severity=self.info.severity,
            message=message,
            subject=subject,
            fix=fix or self.info.fix,
            layer=layer,
            code=code,
            map_loc=map_loc,
            code_end=code_end,
            map_end=map_end,
        )


_RULES: dict[str, Rule] = {}


def register(rule: Rule) -> Rule:
    """Add a rule; a second rule with the same id or name is a programming error."""
    for known in _RULES.values():
        if rule.info.id == known.info.id or rule.info.name == known.info.name:
            raise ValueError(f"rule {rule.info.id} ({rule.info.name}) is already registered")
    _RULES[rule.info.id] = rule
    return rule


def get(key: str) -> Rule:
    """The rule with this id (``SM102``) or name (``signature-drift``)."""
    for rule in _RULES.values():
        if key.upper() == rule.info.id or key == rule.info.name:
            return rule
    raise UnknownNameError("rule", key, [f"{r.info.id} ({r.info.name})" for r in _RULES.values()])


def all_rules() -> tuple[Rule, ...]:
    """Every registered rule, ordered by id."""
    return tuple(_RULES[k] for k in sorted(_RULES))


def select(keys: Iterable[str] | None) -> tuple[Rule, ...]:
    """The rules named by ``keys`` (ids or names), or all when ``keys`` is empty or None."""
    names = list(keys or ())
    if not names:
        return all_rules()
    chosen = {get(k).info.id: get(k) for k in names}
    return tuple(chosen[k] for k in sorted(chosen))
