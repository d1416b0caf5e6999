"""Where Proctor keeps its files: ``$PROCTOR_HOME`` (default ``~/.proctor``)."""

from __future__ import annotations

import os
from pathlib import Path

DATABASE_NAME = "proctor.db"


def proctor_home() -> Path:
    """The state folder, from ``PROCTOR_HOME`` or ``~/.proctor``."""
    configured = os.environ.get("PROCTOR_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".proctor"


def database_path() -> Path:
    """The SQLite database file of the current home."""
    return proctor_home() / DATABASE_NAME
