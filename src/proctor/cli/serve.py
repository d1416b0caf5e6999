"""``proctor serve``: the HTTP API (SPEC UI-2), on loopback unless a token protects it."""

from __future__ import annotations

import os

import click


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8700, show_default=True)
@click.option(
    "--token-env",
    default="PROCTOR_API_TOKEN",
    show_default=True,
    help="Environment variable holding the bearer token every request must carry.",
)
def serve_command(host: str, port: int, token_env: str) -> None:
    """Serve the HTTP API (docs at /docs, OpenAPI at /openapi.json).

    Off loopback the server refuses to start unless the token variable is set; whenever a
    token is set, every request must carry `Authorization: Bearer TOKEN`.
    """
    from proctor.api import check_bind

    token = os.environ.get(token_env) or None
    check_bind(host, token, token_env)

    import uvicorn

    from proctor.api import create_app
    from proctor.store import open_store

    app = create_app(open_store, token=token)
    click.echo(f"Proctor API on http://{host}:{port}/api (Ctrl-C to stop)", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
