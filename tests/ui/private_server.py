"""A ``proctor serve`` whose home a test can also open: for browser tests that arrange state
the API cannot (a review slot held by another process, the app switched off, plans run).

Modules that need it define ``served`` (with ``served_copy``, tests/ui/conftest.py, on a copy
of the seeded store, or :func:`serve_home` on a store of their own) and override ``server``
to return its URL, so the ``page`` fixture talks to this server.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from tests.backends import copy_database, server_env
from tests.loopback import free_port
from tests.server_zygote import forked_serving


class Served(NamedTuple):
    """A running server and the home directory it serves."""

    url: str
    home: Path

    @property
    def database(self) -> Path:
        """The store file the server uses."""
        return self.home / "proctor.db"


def server_command(
    home: Path, extra_env: Mapping[str, str] | None = None
) -> tuple[list[str], dict[str, str], int]:
    """The ``proctor`` arguments, environment and port of a ``proctor serve`` on the store in
    ``home`` (no model requests), for :func:`tests.server_zygote.forked_serving`."""
    port = free_port()
    command = ["serve", "--port", str(port), "--no-heartbeat"]
    env = {
        "PROCTOR_HOME": str(home),
        **server_env(home),
        "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
        "PATH": os.environ.get("PATH", ""),
        **(extra_env or {}),
    }
    return command, env, port


def served_at(home: Path, port: int) -> Served:
    """The server on ``port`` serving ``home``."""
    return Served(f"http://127.0.0.1:{port}", home)


@contextmanager
def serve_home(home: Path, extra_env: Mapping[str, str] | None = None) -> Iterator[Served]:
    """Run ``proctor serve`` on the store in ``home`` for the block (no model requests)."""
    command, env, port = server_command(home, extra_env)
    with forked_serving(command, env, port):
        yield served_at(home, port)


@contextmanager
def serve_copy(seed: Path, home: Path) -> Iterator[Served]:
    """Copy ``seed`` into ``home`` and run ``proctor serve`` on it for the block."""
    copy_database(seed, home / "proctor.db")
    with serve_home(home) as served:
        yield served
