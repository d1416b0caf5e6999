"""A page of another origin can neither write to nor read from ``proctor serve`` (issue 16).

Two origins in Debian's chromium: the token-less Proctor server on ``127.0.0.1:PORT1``, and
an attacker's page on another loopback origin (``localhost:PORT2``: another site;
``127.0.0.1:PORT2``: the same site, another origin). The page tries every request a page may
send to another origin without a CORS preflight; the store must show none of them. A DNS-
rebinding attacker is simulated with ``--host-resolver-rules``: ``attacker.test`` resolves to
127.0.0.1, and the attacker's page is served as ``http://attacker.test:PORT1/`` (fulfilled by
the test, as the attacker's server would have before its name was pointed at loopback), so
its requests to the Proctor server are same-origin and carry ``Host: attacker.test:PORT1``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Playwright, Request, Response

from proctor.store import open_store
from tests.ui.attacker_site import attack_page, attacker_site, rebinding_page
from tests.ui.conftest import CHROMIUM, CHROMIUM_FLAGS, TIMEOUT_MS
from tests.ui.private_server import Served

LOCAL_NETWORK_CHECKS = (
    "LocalNetworkAccessChecks",
    "BlockInsecurePrivateNetworkRequests",
    "PrivateNetworkAccessSendPreflights",
    "PrivateNetworkAccessRespectPreflightResults",
)


@pytest.fixture(scope="module")
def served(served_copy: Served) -> Served:
    return served_copy


@pytest.fixture(scope="module")
def server(served: Served) -> str:
    return served.url


@pytest.fixture(scope="module")
def attacked_browser(playwright: Playwright) -> Iterator[Browser]:
    """Chromium in which ``attacker.test`` resolves to 127.0.0.1, without its own checks of
    requests to the local network: what is refused here, the server refused."""
    launched = playwright.chromium.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=[
            *CHROMIUM_FLAGS,
            "--host-resolver-rules=MAP attacker.test 127.0.0.1",
            # Chromium's own Local Network Access checks would stop the page's requests
            # before they reach the server; other browsers have none: the server must refuse.
            f"--disable-features={','.join(LOCAL_NETWORK_CHECKS)}",
        ],
    )
    yield launched
    launched.close()


def _stored_conversations(served: Served) -> set[str]:
    store = open_store(served.database)
    try:
        return {row.conversation_id for row in store.list_conversations(include_children=True)}
    finally:
        store.close()


def _an_entity(server: str) -> tuple[str, str, str]:
    """A result, one of its entities and that entity's state."""
    result_id = httpx.get(f"{server}/api/results", timeout=10).json()["results"][0]["result_id"]
    entity = httpx.get(f"{server}/api/results/{result_id}/graph", timeout=10).json()["entities"][0]
    return result_id, entity["entity_id"], entity["state"]


def _state(server: str, result_id: str, entity_id: str) -> str:
    graph = httpx.get(f"{server}/api/results/{result_id}/graph", timeout=10).json()
    return str(next(e["state"] for e in graph["entities"] if e["entity_id"] == entity_id))


def _plans(server: str) -> list[str]:
    return [plan["name"] for plan in httpx.get(f"{server}/api/plans", timeout=10).json()["plans"]]


class Traffic:
    """The requests a page sent to the server, and the answers the page's browser saw."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.sent: list[str] = []
        self.answered: list[tuple[str, int]] = []

    def _name(self, request: Request) -> str | None:
        if not request.url.startswith(self.server):
            return None
        return f"{request.method} {request.url[len(self.server) :]}"

    def on_request(self, request: Request) -> None:
        if (name := self._name(request)) is not None:
            self.sent.append(name)

    def on_response(self, response: Response) -> None:
        if (name := self._name(response.request)) is not None:
            self.answered.append((name, response.status))


def _run(browser: Browser, url: str, server: str) -> tuple[dict[str, Any], Traffic]:
    """Open ``url``, wait for its script to finish; what it saw, what went to the server."""
    context = browser.new_context()
    traffic = Traffic(server)
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.on("request", traffic.on_request)
        page.on("response", traffic.on_response)
        page.goto(url)
        page.wait_for_function("() => window.__done === true")
        results: dict[str, Any] = page.evaluate("() => window.__attack")
    finally:
        context.close()
    return results, traffic


@pytest.mark.parametrize("attacker_host", ["localhost", "127.0.0.1"])
def test_a_page_of_another_origin_writes_nothing_and_reads_nothing(
    attacked_browser: Browser, served: Served, attacker_host: str
) -> None:
    result_id, entity_id, state = _an_entity(served.url)
    before = _stored_conversations(served)

    with attacker_site(attack_page(served.url, entity_id)) as port:
        results, traffic = _run(attacked_browser, f"http://{attacker_host}:{port}/", served.url)

    # The browser sent each write (a page may, without asking) and the server refused it
    # (the text/plain fetch's answer is withheld from the page: no CORS permission).
    assert [name.split()[0] for name in traffic.sent].count("POST") == 6, traffic.sent
    writes = [status for name, status in traffic.answered if name.startswith("POST")]
    assert len(writes) >= 5 and set(writes) <= {403, 415}, traffic.answered
    # Nothing was stored, removed, confirmed or planned.
    assert _stored_conversations(served) == before
    assert not any("planted" in conversation for conversation in before)
    assert _state(served.url, result_id, entity_id) == state
    assert "planted-plan" not in _plans(served.url)
    # The read was answered without a CORS permission, so the page got nothing.
    assert "read_text" not in results
    assert str(results["read_conversations"]).startswith("error")


def test_a_rebound_host_name_reads_nothing_and_writes_nothing(
    attacked_browser: Browser, served: Served
) -> None:
    before = _stored_conversations(served)
    port = served.url.rsplit(":", 1)[1]
    origin = f"http://attacker.test:{port}"
    context = attacked_browser.new_context()
    try:
        context.route(
            f"{origin}/",
            lambda route: route.fulfill(
                status=200, content_type="text/html", body=rebinding_page()
            ),
        )
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(f"{origin}/")
        page.wait_for_function("() => window.__done === true")
        results: dict[str, Any] = page.evaluate("() => window.__attack")
        navigated = page.goto(f"{origin}/api/conversations")
        assert navigated is not None
        shown = page.content()
    finally:
        context.close()

    assert (results["/api/conversations"], results["/openapi.json"], results["write"]) == (
        421,
        421,
        421,
    ), results
    assert navigated.status == 421
    assert "--allowed-host" in shown  # the sentence says what to do
    seen = " ".join(str(value) for value in results.values()) + shown
    assert not any(conversation in seen for conversation in before)
    assert '"paths"' not in seen
    assert _stored_conversations(served) == before


def test_the_server_s_own_page_still_reads_and_writes(browser: Browser, served: Served) -> None:
    result_id, entity_id, _ = _an_entity(served.url)
    context = browser.new_context(base_url=served.url)
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto("/")
        # The UI's own module makes the calls, as its pages do.
        answer = page.evaluate(
            """async ([entity]) => {
              const api = await import("/ui/js/api.js");
              const listed = await api.get("/conversations?limit=1");
              const confirmed = await api.post(`/graph/entity/${entity}/confirm`);
              return {listed: listed.conversations.length, action: confirmed.edit.action};
            }""",
            [entity_id],
        )
    finally:
        context.close()

    assert answer == {"listed": 1, "action": "confirm"}
    assert _state(served.url, result_id, entity_id) == "confirmed"
