"""The webhook outbox: settle new notifications, claim them once, deliver, record.

A new notification is ``pending``. ``settle_pending`` looks up the policy of each one's
conversation (the same lookup ``proctor check`` makes) and marks those whose policy has
no webhook ``skipped``; ``deliver_webhooks`` claims the rest — one process wins each
claim — POSTs them and records ``delivered`` or ``failed`` with the reason. A broken
policy file fails the delivery with the policy's own error; nothing is raised.

Who delivers: ``proctor serve`` and ``proctor watch`` run a ``WebhookThread``; a short
command that wrote findings (``check``, ``ingest``) calls ``hand_off_webhooks``, which
settles inline (no network) and, only when something is left to send, starts a detached
``python -m proctor.notify`` that delivers and exits — the command itself never waits
for a receiver.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from proctor._util.clock import utcnow
from proctor._util.detached import start_detached
from proctor.errors import ProctorError
from proctor.notify._webhook import PostResult, post_webhook, webhook_body
from proctor.store import Notification, SqlStore, WebhookState

if TYPE_CHECKING:
    from proctor.rules import Notify

log = logging.getLogger("proctor.notify")

STALE_CLAIM = timedelta(minutes=10)
"""A claim older than this was left by a process that died; another may take it over."""
TOO_OLD = timedelta(days=1)
"""A pending notification older than this is skipped rather than sent late."""
SQLITE_VARIABLE = "PROCTOR_NOTIFY_SQLITE"
"""Names the SQLite file a detached deliverer opens (a PostgreSQL URL goes in
``PROCTOR_DATABASE_URL``)."""

PolicyLookup = Callable[[Notification], "Notify"]


@dataclass(frozen=True, slots=True)
class DeliveryOutcome:
    """What happened to one claimed notification."""

    key: str
    state: WebhookState
    attempts: int
    error: str | None = None


def project_notify(notification: Notification) -> Notify:
    """The ``[notify]`` section of the policy that applies to the notification's conversation.

    The policy models are imported here, when a notification is to be delivered: a server's
    webhook thread then costs nothing at start where none is pending (0.34 CPU s a server)."""
    from proctor.rules import find_policy

    return find_policy(cwd=notification.cwd, project=notification.project).notify


def settle_pending(store: SqlStore, *, policy_for: PolicyLookup = project_notify) -> int:
    """Mark pending notifications that have no webhook (or are too old) ``skipped``, and
    ones whose policy cannot be read ``failed``; returns how many are left to deliver."""
    left = 0
    oldest = utcnow() - TOO_OLD
    for notification in store.pending_webhook_notifications(limit=10_000):
        if notification.created_at < oldest:
            store.record_webhook_outcome(
                notification.key, "skipped", error="too old to send", only_from="pending"
            )
            continue
        try:
            notify = policy_for(notification)
        except ProctorError as exc:
            store.record_webhook_outcome(
                notification.key, "failed", error=str(exc), only_from="pending"
            )
            continue
        if notify.webhook_url is None:
            store.record_webhook_outcome(notification.key, "skipped", only_from="pending")
        else:
            left += 1
    return left


def deliver_webhooks(
    store: SqlStore,
    *,
    policy_for: PolicyLookup = project_notify,
    backoff: float = 1.0,
    wait: Callable[[float], object] | None = None,
    stop: threading.Event | None = None,
) -> list[DeliveryOutcome]:
    """Settle, then claim and deliver every notification waiting for its webhook (until
    ``stop`` is set: what is not claimed yet stays pending for the next deliverer)."""
    settle_pending(store, policy_for=policy_for)
    outcomes: list[DeliveryOutcome] = []
    while stop is None or not stop.is_set():
        claimed = store.claim_webhook_deliveries(stale_before=utcnow() - STALE_CLAIM)
        if not claimed:
            return outcomes
        for notification in claimed:
            outcomes.append(_deliver_one(store, notification, policy_for, backoff, wait))
    return outcomes


def _deliver_one(
    store: SqlStore,
    notification: Notification,
    policy_for: PolicyLookup,
    backoff: float,
    wait: Callable[[float], object] | None,
) -> DeliveryOutcome:
    try:
        notify = policy_for(notification)
        content = store.finding(notification.finding_id).content
    except ProctorError as exc:
        result = PostResult(False, 0, str(exc))
    else:
        if notify.webhook_url is None:
            store.record_webhook_outcome(notification.key, "skipped")
            return DeliveryOutcome(notification.key, "skipped", 0)
        body = webhook_body(notification, content, link_base=notify.link_base)
        result = post_webhook(
            notify.webhook_url,
            body,
            timeout=notify.timeout_seconds,
            retries=notify.retries,
            backoff=backoff,
            wait=wait,
        )
    state: WebhookState = "delivered" if result.delivered else "failed"
    if not result.delivered:
        log.warning("notification %s not delivered: %s", notification.key, result.error)
    store.record_webhook_outcome(
        notification.key, state, attempts=result.attempts, error=result.error
    )
    return DeliveryOutcome(notification.key, state, result.attempts, result.error)


def hand_off_webhooks(store: SqlStore) -> subprocess.Popen[bytes] | None:
    """After a short command wrote findings: settle inline, and when some notification
    must go to a webhook, start a detached deliverer for it (returned, not waited for).

    Never raises: a store that cannot be read here is left for the next deliverer.
    """
    try:
        if settle_pending(store) == 0:
            return None
    except ProctorError as exc:
        log.warning("webhook deliveries not settled: %s", exc)
        return None
    env = dict(os.environ)
    if store.dialect == "sqlite":
        env[SQLITE_VARIABLE] = store.description
    else:
        env["PROCTOR_DATABASE_URL"] = store.database_url()
    return start_detached([sys.executable, "-m", "proctor.notify"], env)


class WebhookThread:
    """Delivers webhooks in the background of a long-running process, every ``interval``
    seconds while it runs (``proctor serve``, ``proctor watch``)."""

    def __init__(
        self, store: Callable[[], SqlStore], *, interval: float = 3.0, backoff: float = 1.0
    ) -> None:
        self._store = store
        self._interval = interval
        self._backoff = backoff
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start delivering (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="webhooks", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop after the attempt in progress (a wait between retries ends at once)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                deliver_webhooks(
                    self._store(), backoff=self._backoff, wait=self._stop.wait, stop=self._stop
                )
            except ProctorError as exc:
                log.warning("webhook deliveries: %s", exc)
            self._stop.wait(self._interval)
