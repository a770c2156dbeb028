"""``stackmap eval``: the group every evaluation command (impact, ask, …) registers on."""

from __future__ import annotations

import typer

eval_app = typer.Typer(
    help="Evaluations of the map's answers on real material.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(eval_app, name="eval")
