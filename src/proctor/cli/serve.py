"""``proctor serve``: the HTTP API (SPEC UI-2), on loopback unless a token protects it."""

from __future__ import annotations

import gc
import os

import click

from proctor._util.collector import mark_long_lived
from proctor.cli._collection import collection_paused
from proctor.cli._duration import Duration


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8700, show_default=True)
@click.option(
    "--token-env",
    default="PROCTOR_API_TOKEN",
    show_default=True,
    help="Environment variable holding the bearer token every request must carry.",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME[:PORT]",
    help="Another host name to answer to (a reverse proxy's); repeatable. "
    "Default: $PROCTOR_ALLOWED_HOSTS (comma-separated).",
)
@click.option(
    "--heartbeat-interval", type=Duration("s", fractions=True), default="30s",
    show_default=True, help="How often to run due heartbeat plans (as `proctor worker` does).",
)  # fmt: skip
@click.option(
    "--no-heartbeat", is_flag=True,
    help="Do not run heartbeat plans here (a separate `proctor worker` runs them).",
)  # fmt: skip
@click.option(
    "--index/--no-index", default=True, show_default=True, envvar="PROCTOR_SERVE_INDEX",
    help="Keep the search index current in the background from the start (full text, then "
    "embeddings); with --no-index it starts at the first search. "
    "Default: $PROCTOR_SERVE_INDEX.",
)  # fmt: skip
def serve_command(
    host: str,
    port: int,
    token_env: str,
    allowed_hosts: tuple[str, ...],
    heartbeat_interval: float,
    no_heartbeat: bool,
    index: bool,
) -> None:
    """Serve the HTTP API (docs at /docs, OpenAPI at /openapi.json).

    Off loopback the server refuses to start unless the token variable is set; whenever a
    token is set, every request must carry `Authorization: Bearer TOKEN`. Requests must
    name the server as bound (127.0.0.1, localhost or [::1] with the port, or an
    --allowed-host), and no other web site's page may change its data. While it runs, the
    server also runs due heartbeat plans (when the supervisor app is on), unless
    `--no-heartbeat` leaves them to `proctor worker`. It also keeps the search index current
    in the background (`--no-index`: only from the first search on).
    """
    from proctor.api import ALLOWED_HOSTS_ENV, allowed_hosts_from_env, check_bind

    token = os.environ.get(token_env) or None
    check_bind(host, token, token_env)
    names = list(allowed_hosts) or allowed_hosts_from_env(os.environ.get(ALLOWED_HOSTS_ENV))

    # Before the store's first connection and the server's threads (``_sqlite_library``):
    # concurrent searches then do not queue on SQLite's allocation count.
    from proctor.store import stop_counting_allocations

    stop_counting_allocations()
    with collection_paused():
        import uvicorn

        from proctor.api import create_app
        from proctor.store import open_store

        app = create_app(
            open_store,
            token=token,
            heartbeat_interval=None if no_heartbeat else heartbeat_interval,
            host=host,
            port=port,
            allowed_hosts=names,
            index_search=index,
            deliver_webhooks=True,
        )
    gc.freeze()  # the app and its modules live as long as the server
    # And so does what searching and the gate load later (a held catalog, a session's
    # history): ``freeze_what_lives`` freezes it then.
    mark_long_lived()
    click.echo(f"Proctor API on http://{host}:{port}/api (Ctrl-C to stop)", err=True)
    from proctor.gate import ServerAddress, advertise, withdraw

    # `proctor gate` hooks of this PROCTOR_HOME forward to this server while it runs.
    advertise(ServerAddress(os.getpid(), host, port, token_env if token else None))
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        withdraw(os.getpid())
