"""``stackmap serve``: the web UI, plugged into the ``stackmap`` command line through the
``stackmap.commands`` entry point (see :mod:`mapper.cli.plugins`)."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from pathlib import Path

import typer

from mapper.cli._common import fail
from mapper.errors import MapperError

DEFAULT_PORT = 8750
TOKEN_ENV = "STACKMAP_TOKEN"


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(
    root: Path = typer.Option(Path("."), "--root", "-C", help="Repository root."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (loopback by default)."),
    port: int = typer.Option(
        DEFAULT_PORT, "--port", help="TCP port (0: a free one, shown in the URL printed)."
    ),
    token: str | None = typer.Option(
        None,
        "--token",
        help=f"Bearer token every request must carry (or ${TOKEN_ENV}); "
        "required when binding to a non-loopback address.",
    ),
    allow_host: list[str] = typer.Option(
        [], "--allow-host", help="Extra Host header value to accept (repeatable)."
    ),
) -> None:
    """Serve the web UI (read-only): Ask, Map, Check, Impact, role views and the JSON API.

    Examples: `stackmap serve`, `stackmap serve --host 0.0.0.0 --token "$(openssl rand -hex 16)"`.
    """
    import uvicorn

    from web.app import LOOPBACK_HOSTS, create_app
    from web.data import MapData
    from web.errors import WebError

    token = token or os.environ.get(TOKEN_ENV) or None
    if not is_loopback(host) and not token:
        fail(f"binding to {host} needs a token: pass --token or set ${TOKEN_ENV}")
    if not 0 <= port < 65536:
        fail(f"--port must be 0..65535, got {port}")
    try:
        data = MapData(root)
    except (WebError, MapperError) as exc:
        fail(str(exc))
    hosts = [*LOOPBACK_HOSTS, *allow_host]
    if not is_loopback(host) and host not in ("0.0.0.0", "::"):
        hosts.append(host)
    app = create_app(data, token=token, allowed_hosts=hosts)
    bare = host.strip("[]")
    try:  # bound here, so the URL printed names the port served (also for --port 0)
        sock = socket.create_server(
            (bare, port), family=socket.AF_INET6 if ":" in bare else socket.AF_INET
        )
    except OSError as exc:
        fail(f"cannot bind {host}:{port}: {os.strerror(exc.errno) if exc.errno else exc}")
    port = int(sock.getsockname()[1])
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    url = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
    print(f"stackmap: serving {data.root} on {url}", file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
