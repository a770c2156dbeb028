"""Commands other packages add to ``stackmap`` through the ``stackmap.commands`` entry points.

The web UI plugs ``stackmap serve`` in this way, so the map tool never imports the packages
built on top of it. Each entry point names a ``register(app)`` callable, like the command
modules here.
"""

from __future__ import annotations

from importlib.metadata import entry_points

import typer

GROUP = "stackmap.commands"


def register_all(app: typer.Typer) -> None:
    """Call every installed ``stackmap.commands`` entry point's ``register(app)``, by name."""
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        ep.load()(app)
