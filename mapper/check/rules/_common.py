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


def layer_entry(facts: Facts, layer: str) -> Location:
    """Where the layer is declared: its ``id = "..."`` line in stackmap.toml (or pyproject.toml)."""
    for name in ("stackmap.toml", "pyproject.toml"):
        try:
            lines = (facts.root / name).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for i, line in enumerate(lines):
            if line.replace(" ", "") in (f'id="{layer}"', f"id='{layer}'"):
                return Location(name, i + 1)
        if name == "stackmap.toml":
            return Location(name)
    return Location("stackmap.toml")


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
