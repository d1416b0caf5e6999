"""Where the store lives: ``PROCTOR_DATABASE_URL`` (PostgreSQL) or ``$PROCTOR_HOME/proctor.db``."""

from __future__ import annotations

import os

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from proctor._util.paths import database_path
from proctor.errors import ConfigError

DATABASE_URL_VARIABLE = "PROCTOR_DATABASE_URL"


def configured_database_url() -> str | None:
    """The database URL from ``PROCTOR_DATABASE_URL``; None selects the SQLite file."""
    value = os.environ.get(DATABASE_URL_VARIABLE, "").strip()
    if not value:
        return None
    try:
        make_url(value)
    except ArgumentError as exc:
        raise ConfigError(
            f"{DATABASE_URL_VARIABLE} is not a database URL ({exc}); use "
            "postgresql://USER:PASSWORD@HOST:PORT/DATABASE or unset it to use the SQLite file"
        ) from exc
    return value


def database_location() -> str:
    """The configured database for messages: the URL without its password, or the file."""
    url = configured_database_url()
    if url is None:
        return str(database_path())
    return make_url(url).render_as_string(hide_password=True)


def database_exists() -> bool:
    """Whether the configured database may hold data: a server always may, a file once created."""
    return configured_database_url() is not None or database_path().exists()
