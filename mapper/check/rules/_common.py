"""Helpers the rule families share: where a layer lives, and where the map is."""

from __future__ import annotations

from mapper.check.facts import Facts
from mapper.model import Location


def layer_home(facts: Facts, layer: str) -> Location | None:
    """A path standing for a whole layer: the fixed prefix of its first glob (``stack/kmd``)."""
    try:
        globs = facts.config.layer(layer).paths
    except LookupError:
        return None
    for glob in globs:
        fixed = []
        for part in glob.split("/"):
            if any(c in part for c in "*?[") or not part:
                break
            fixed.append(part)
        if fixed:
            return Location("/".join(fixed))
    return None


def norm_type(text: str | None) -> str | None:
    if text is None:
        return None
    return "".join(text.split()).replace("'", "").replace('"', "")


def norm_literal(text: str | None) -> str | None:
    """A default as written, normalised so ``1e-5`` equals ``1e-05`` and quotes do not matter."""
    if text is None:
        return None
    stripped = text.strip()
    try:
        return repr(float(stripped)) if stripped.lower() not in ("nan", "inf") else stripped
    except ValueError:
        return "".join(stripped.split()).replace("'", '"')
