"""Notifications delivered to the policy's webhook: retried, recorded, once, and never waited
for by the command that wrote them (SPEC SUP-8)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.errors import ConfigError
from proctor.ingest import ingest
from proctor.notify import deliver_webhooks
from proctor.rules import parse_policy
from proctor.store import SqlStore, open_store
from proctor.supervision import check_conversations
from tests.backends import database_env, until
from tests.conftest import EXAMPLES_DIR
from tests.notify.receiver import Receiver, receiving


def _policy(home: Path, project: str, url: str, **more: object) -> None:
    folder = home / "policies"
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["[notify]", f'webhook_url = "{url}"']
    lines += [f"{key} = {value!r}" for key, value in more.items()]
    (folder / f"{project}.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def store(proctor_home: Path) -> SqlStore:
    """The examples ingested and checked: notifications pending delivery."""
    opened = open_store(proctor_home / "proctor.db")
    ingest(opened, [EXAMPLES_DIR])
    roots = [
        r.conversation_id
        for r in opened.list_conversations()
        if r.conversation.parent_conversation_id is None
    ]
    check_conversations(opened, roots)
    return opened


def _ledger(store: SqlStore) -> list[str]:
    """Keys of the pending notifications of the ledger-sync project (one policy)."""
    return [n.key for n in store.notification_page(project="ledger-sync", limit=100).items]


@pytest.mark.slow
def test_a_receiver_that_fails_twice_gets_the_notification_on_the_third_attempt(
    store: SqlStore, proctor_home: Path
) -> None:
    wanted = _ledger(store)
    assert wanted
    with receiving([500, 503, 200]) as receiver:
        _policy(proctor_home, "ledger-sync", receiver.url, retries=3)
        outcomes = deliver_webhooks(store, backoff=0.01)
        delivered = {o.key: o for o in outcomes if o.state == "delivered"}
        assert set(delivered) == set(wanted)
        # The first one sent took three attempts; the receiver answered the rest at once.
        assert sorted(o.attempts for o in delivered.values()) == [1] * (len(wanted) - 1) + [3]
        bodies = receiver.bodies
    assert len(bodies) == len(wanted) + 2  # two refused attempts, then one each
    for key in wanted:
        row = store.notification(key)
        assert row.webhook_state == "delivered"
        sent = [b for b in bodies if b["notification"]["id"] == key]
        assert sent, f"{key} was never sent"
        body = sent[-1]
        assert body["finding"]["id"] == row.finding_id
        assert body["finding"]["title"] == row.title
        assert body["links"]["cli"] == f"proctor findings show {row.finding_id}"
        assert body["links"]["ui"] is None
    # Every other project has no webhook: skipped, never sent.
    others = store.notification_page(limit=100).items
    assert {n.webhook_state for n in others if n.project != "ledger-sync"} == {"skipped"}
    # Delivered once: another round sends nothing.
    with receiving([200]) as again:
        _policy(proctor_home, "ledger-sync", again.url)
        assert deliver_webhooks(store, backoff=0.01) == []
        assert again.bodies == []


def test_a_receiver_that_keeps_failing_is_recorded_failed_with_its_reason_not_raised(
    store: SqlStore, proctor_home: Path
) -> None:
    with receiving([503]) as receiver:
        _policy(proctor_home, "ledger-sync", receiver.url, retries=1)
        outcomes = deliver_webhooks(store, backoff=0.01)
    failed = [o for o in outcomes if o.state == "failed"]
    assert failed and all(o.attempts == 2 for o in failed)
    row = store.notification(failed[0].key)
    assert (row.webhook_state, row.webhook_attempts) == ("failed", 2)
    assert row.webhook_error == "127.0.0.1 answered 503"
    assert "secret-token" not in (row.webhook_error or "")


def test_a_refusal_that_retrying_cannot_mend_is_not_retried(
    store: SqlStore, proctor_home: Path
) -> None:
    with receiving([404, 200]) as receiver:
        _policy(proctor_home, "ledger-sync", receiver.url, retries=5)
        outcomes = deliver_webhooks(store, backoff=0.01)
        assert len(receiver.bodies) == len(_ledger(store))
    assert {o.attempts for o in outcomes if o.state == "failed"} == {1}


def test_the_body_links_the_web_ui_when_the_policy_names_it(
    store: SqlStore, proctor_home: Path
) -> None:
    with receiving([200]) as receiver:
        _policy(proctor_home, "ledger-sync", receiver.url, link_base="http://127.0.0.1:8765/")
        deliver_webhooks(store, backoff=0.01)
        body = receiver.bodies[0]
        headers = receiver.headers[0]
    finding = body["finding"]
    assert body["links"]["ui"] == (
        "http://127.0.0.1:8765/#/conversations/"
        + finding["conversation_id"].replace(":", "%3A")
        + f"?finding={finding['id']}"
    )
    assert headers["Content-Type"] == "application/json"
    assert set(body) == {"type", "notification", "finding", "links"}


def test_a_broken_policy_fails_the_delivery_with_the_policys_own_error(
    store: SqlStore, proctor_home: Path
) -> None:
    folder = proctor_home / "policies"
    folder.mkdir(parents=True)
    (folder / "ledger-sync.toml").write_text('[notify]\nwebhook_url = "ftp://x"\n')
    deliver_webhooks(store, backoff=0.01)
    row = store.notification(_ledger(store)[0])
    assert row.webhook_state == "failed"
    assert "ledger-sync.toml" in (row.webhook_error or "")
    assert "notify.webhook_url" in (row.webhook_error or "")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('[notify]\nwebhook_url = "file:///etc/passwd"\n', "notify.webhook_url"),
        ('[notify]\nwebhook_url = "https://"\n', "notify.webhook_url"),
        ('[notify]\nwebhook_url = "https://h.example"\nretries = 11\n', "notify.retries"),
        ('[notify]\nwebhook_url = "https://h.example"\ntimeout_seconds = 0\n', "notify.timeout"),
        ('[notify]\nwebhok_url = "https://h.example"\n', "notify.webhok_url"),
    ],
)
def test_a_wrong_notify_section_is_refused_naming_the_file_and_the_key(
    text: str, where: str
) -> None:
    with pytest.raises(ConfigError, match=rf"policy\.toml: invalid policy: {where}"):
        parse_policy(text, "policy.toml")


def _proctor(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROCTOR_HOME": str(home), **database_env(home)}
    return subprocess.run(
        [sys.executable, "-m", "proctor.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _wait_delivered(home: Path, key: str, receiver: Receiver) -> None:
    reader = open_store(home / "proctor.db")
    try:

        def delivered() -> bool:
            """the detached deliverer recorded the delivery"""
            return reader.notification(key).webhook_state == "delivered"

        until(delivered)
    finally:
        reader.close()


@pytest.mark.slow
def test_an_import_returns_while_the_receiver_stalls_and_the_delivery_finishes_after(
    store: SqlStore, proctor_home: Path, tmp_path: Path
) -> None:
    key = _ledger(store)[0]
    store.close()
    with receiving([200], hold=True) as receiver:
        _policy(proctor_home, "ledger-sync", receiver.url, timeout_seconds=60.0)
        other = tmp_path / "more"
        other.mkdir()
        (other / "note.jsonl").write_text(
            '{"type": "header", "format": "proctor-jsonl", "version": 1}\n'
            '{"type": "conversation", "conversation_id": "c", "project": "p"}\n'
            '{"type": "message", "conversation_id": "c", "message_id": "m", "role": "user",'
            ' "text": "hello"}\n'
        )
        done = _proctor(proctor_home, "ingest", str(other))
        assert done.returncode == 0, done.stderr
        # The import is over; its hand-off is still waiting for the receiver.
        assert receiver.arrived.wait(60)
        assert not receiver.release.is_set()
        receiver.release.set()
        _wait_delivered(proctor_home, key, receiver)


@pytest.mark.slow
def test_check_hands_off_its_new_notifications_to_a_detached_deliverer(
    proctor_home: Path,
) -> None:
    with receiving([200], hold=True) as receiver:
        _policy(proctor_home, "invoice-service", receiver.url)
        assert _proctor(proctor_home, "ingest", str(EXAMPLES_DIR)).returncode == 0
        done = _proctor(proctor_home, "check", "--all")
        assert done.returncode == 0, done.stderr
        assert receiver.arrived.wait(60)
        receiver.release.set()
        reader = open_store(proctor_home / "proctor.db")
        try:
            wanted = [
                n.key for n in reader.notification_page(project="invoice-service", limit=100).items
            ]

            def all_delivered() -> bool:
                """every invoice-service notification was delivered"""
                return all(reader.notification(k).webhook_state == "delivered" for k in wanted)

            until(all_delivered)
        finally:
            reader.close()
    assert sorted(b["notification"]["id"] for b in receiver.bodies) == sorted(wanted)


_QUIET_PASS = """
import sys
from proctor.notify import deliver_webhooks
from proctor.store import open_store
store = open_store(sys.argv[1])
try:
    deliver_webhooks(store)
finally:
    store.close()
print(sorted(m for m in ("proctor.rules", "httpx") if m in sys.modules))
"""


def test_a_delivery_pass_with_nothing_pending_loads_no_policy_or_http_client(
    tmp_path: Path,
) -> None:
    # A server's webhook thread runs this pass a moment after it starts: where nothing waits
    # to be sent it should cost no policy models (pydantic) and no httpx.
    env = {**os.environ, "PROCTOR_HOME": str(tmp_path)}
    env.pop("PROCTOR_DATABASE_URL", None)
    completed = subprocess.run(  # a new SQLite store: nothing pending
        [sys.executable, "-c", _QUIET_PASS, str(tmp_path / "proctor.db")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
    )
    assert completed.stdout.strip().splitlines()[-1] == "[]", completed.stderr
