"""The web UI over the map (``stackmap serve``): Ask, Map, node Detail, Check, Impact and one
view per role, with a JSON API mirroring them. Imports ``mapper`` only, and reads it through
:mod:`web.data` alone (both enforced by import-linter)."""
