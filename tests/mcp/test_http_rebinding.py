"""``proctor mcp --transport http`` answers only to its own name and its own pages (issue 16).

A page the user opens must not become an MCP client: not through DNS rebinding (its own
host name pointed at 127.0.0.1: a foreign ``Host``), and not from another local port (an
``Origin`` of ``http://localhost:OTHER``, which the SDK's default settings let through).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from proctor.mcp._server import transport_security
from tests.loopback import free_port, serving
from tests.mcp.conftest import PreparedHome

pytestmark = pytest.mark.slow  # a Proctor server (one for the module)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def port(prepared_mcp_home: PreparedHome) -> Iterator[int]:
    """One server for the module: every request here is an ``initialize``, which reads
    nothing and writes nothing, so no test can see another's."""
    home = prepared_mcp_home
    chosen = free_port()
    with serving(home.command("--transport", "http", "--port", str(chosen)), home.env(), chosen):
        yield chosen


def _initialize(port: int, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(
        f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers=ACCEPT | headers, timeout=10
    )


@pytest.mark.parametrize("host", ["attacker.test", "attacker.test:{port}", "localhost:1"])
def test_a_request_naming_another_host_is_refused(port: int, host: str) -> None:
    refused = _initialize(port, {"Host": host.format(port=port)})

    assert refused.status_code == 421


@pytest.mark.parametrize(
    "origin",
    ["http://attacker.test:{port}", "http://localhost:{other}", "http://127.0.0.1:{other}", "null"],
)
def test_a_page_of_another_origin_is_refused(port: int, origin: str) -> None:
    refused = _initialize(port, {"Origin": origin.format(port=port, other=port + 1)})

    assert refused.status_code == 403


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Host": "localhost:{port}"},
        {"Origin": "http://127.0.0.1:{port}"},
        {"Host": "localhost:{port}", "Origin": "http://localhost:{port}"},
    ],
)
def test_the_server_s_own_names_and_clients_without_an_origin_are_answered(
    port: int, headers: dict[str, str]
) -> None:
    answered = _initialize(port, {k: v.format(port=port) for k, v in headers.items()})

    assert answered.status_code == 200, answered.text
    assert '"serverInfo"' in answered.text


def test_the_names_carry_the_bound_port_and_address() -> None:
    settings = transport_security("127.0.0.2", 8765)

    assert settings.enable_dns_rebinding_protection
    assert settings.allowed_hosts == [
        "127.0.0.1:8765",
        "localhost:8765",
        "[::1]:8765",
        "127.0.0.2:8765",
    ]
    assert "http://localhost:8765" in settings.allowed_origins
    assert not any(origin.endswith(":*") for origin in settings.allowed_origins)
    assert transport_security("::1", 9000).allowed_hosts[-1] == "[::1]:9000"
