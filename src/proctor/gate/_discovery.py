"""Where a running ``proctor serve`` can be reached: ``$PROCTOR_HOME/server.json``.

``proctor serve`` writes the file when it starts (its process id, host, port and the name
of the environment variable holding its bearer token, never the token) and removes it when
it stops. The gate hook reads it to hand its decision to the server, which already holds
the session's history, instead of reading that history itself. A file left by a server
that died is ignored (its process is gone) and replaced by the next server.

Standard library only, and not even ``pathlib``: the hook reads this before deciding
whether to import anything else.
"""

from __future__ import annotations

import contextlib
import os

DISCOVERY_FILE = "server.json"


class ServerAddress:
    """A local Proctor server the gate hook may forward to (a plain class: no dataclasses).

    ``token_env`` names the environment variable holding the server's bearer token.
    """

    __slots__ = ("host", "pid", "port", "token_env")

    def __init__(self, pid: int, host: str, port: int, token_env: str | None = None) -> None:
        self.pid, self.host, self.port, self.token_env = pid, host, port, token_env

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ServerAddress) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"ServerAddress(pid={self.pid}, host={self.host!r}, port={self.port})"

    def _key(self) -> tuple[int, str, int, str | None]:
        return (self.pid, self.host, self.port, self.token_env)


def discovery_path(home: str | os.PathLike[str] | None = None) -> str:
    """The discovery file of ``home`` (default: ``$PROCTOR_HOME``, as ``proctor_home``)."""
    if home is None:
        home = os.environ.get("PROCTOR_HOME") or os.path.join(os.path.expanduser("~"), ".proctor")
    return os.path.join(os.path.expanduser(os.fspath(home)), DISCOVERY_FILE)


def advertise(address: ServerAddress, home: str | os.PathLike[str] | None = None) -> str:
    """Write the discovery file (atomically, readable by its owner only); returns its path."""
    path = discovery_path(home)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    partial = os.path.join(os.path.dirname(path), f".{DISCOVERY_FILE}.{address.pid}")
    import json

    text = json.dumps(
        {
            "pid": address.pid,
            "host": address.host,
            "port": address.port,
            "token_env": address.token_env,
        }
    )
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text)
    os.replace(partial, path)
    return path


def withdraw(pid: int, home: str | os.PathLike[str] | None = None) -> None:
    """Remove the discovery file if it still names the process ``pid``."""
    path = discovery_path(home)
    found = _read(path)
    if found is not None and found.pid == pid:
        with contextlib.suppress(OSError):
            os.unlink(path)


def running_server(home: str | os.PathLike[str] | None = None) -> ServerAddress | None:
    """The server the discovery file names, if its process is alive; else None."""
    found = _read(discovery_path(home))
    if found is None or not _alive(found.pid):
        return None
    return found


def _read(path: str) -> ServerAddress | None:
    try:
        with open(path, "rb") as handle:
            text = handle.read()
    except OSError:
        return None
    import json  # only when there is a file: importing json (and re) costs a hook ~10 ms

    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    pid, host, port, token_env = (data.get(k) for k in ("pid", "host", "port", "token_env"))
    if not (isinstance(pid, int) and isinstance(host, str) and isinstance(port, int)):
        return None
    return ServerAddress(pid, host, port, token_env if isinstance(token_env, str) else None)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True  # alive, another user's
    except OSError:
        return False
    return True
