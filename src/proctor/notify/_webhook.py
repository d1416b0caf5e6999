"""One notification to one webhook: the JSON body, and the POST with retries and backoff.

The body carries the notification, a summary of its finding (title, severity, rule,
status, conversation, project and its content, which is the redacted text Proctor stored,
cut to ``SUMMARY_CHARS``) and links to it: the command that shows it, and the web UI's
page when the policy names the UI's address. Nothing else of the transcript is sent.

An attempt that gets no answer, or 408, 429 or a 5xx, is retried after ``backoff``
seconds, doubling up to ``MAX_BACKOFF``; any other answer ends it (2xx delivered,
redirects are not followed). Errors name the receiver's host only: a webhook URL's path
often holds its secret.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from proctor import __version__
from proctor.store import Notification

if TYPE_CHECKING:
    import httpx

SUMMARY_CHARS = 2000
"""The most of a finding's content a webhook body carries."""
MAX_BACKOFF = 30.0
"""The longest wait between two attempts, in seconds."""
_RETRIED_STATUSES = frozenset({408, 429})


@dataclass(frozen=True, slots=True)
class PostResult:
    """How a delivery ended: delivered or not, after how many attempts, and why not."""

    delivered: bool
    attempts: int
    error: str | None = None


def finding_link(notification: Notification, link_base: str | None) -> str | None:
    """The web UI's address of the notification's finding (on its conversation's page)."""
    if link_base is None:
        return None
    conversation = quote(notification.conversation_id, safe="")
    return (
        f"{link_base.rstrip('/')}/#/conversations/{conversation}"
        f"?finding={quote(notification.finding_id, safe='')}"
    )


def webhook_body(
    notification: Notification, content: str, *, link_base: str | None = None
) -> dict[str, Any]:
    """The JSON a webhook receives for one notification."""
    return {
        "type": "proctor.notification",
        "notification": {
            "id": notification.key,
            "created_at": notification.created_at.isoformat(),
        },
        "finding": {
            "id": notification.finding_id,
            "title": notification.title,
            "severity": notification.severity,
            "action": notification.action,
            "category": notification.category,
            "rule": notification.rule,
            "origin": notification.origin,
            "status": notification.status,
            "conversation_id": notification.conversation_id,
            "conversation_title": notification.conversation_title,
            "project": notification.project,
            "summary": content[:SUMMARY_CHARS],
        },
        "links": {
            "cli": f"proctor findings show {notification.finding_id}",
            "ui": finding_link(notification, link_base),
        },
    }


def _host(url: str) -> str:
    return urlsplit(url).hostname or "the receiver"


def post_webhook(
    url: str,
    body: dict[str, Any],
    *,
    timeout: float,
    retries: int,
    backoff: float = 1.0,
    wait: Callable[[float], object] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> PostResult:
    """POST ``body`` to ``url``: up to ``1 + retries`` attempts; never raises.

    ``wait`` is how the pause between attempts is taken (``time.sleep`` by default; a
    thread passes its stop event's ``wait`` so that stopping does not wait for it).
    """
    if urlsplit(url).scheme not in ("http", "https"):
        return PostResult(False, 0, "only http:// and https:// webhooks are called")
    import httpx  # on the first webhook sent, not when a server starts its webhook thread

    pause = wait or _sleep
    error = "not attempted"
    headers = {"User-Agent": f"proctor/{__version__}", "Content-Type": "application/json"}
    with httpx.Client(
        timeout=timeout, follow_redirects=False, transport=transport, trust_env=False
    ) as client:
        for attempt in range(1, retries + 2):
            retry = True
            try:
                answer = client.post(url, json=body, headers=headers)
            except httpx.TimeoutException:
                error = f"no answer from {_host(url)} within {timeout:g} s"
            except httpx.HTTPError as exc:
                error = f"cannot reach {_host(url)}: {type(exc).__name__}"
            else:
                if answer.is_success:
                    return PostResult(True, attempt)
                error = f"{_host(url)} answered {answer.status_code}"
                retry = answer.status_code >= 500 or answer.status_code in _RETRIED_STATUSES
            if not retry or attempt > retries:
                return PostResult(False, attempt, error)
            pause(min(backoff * 2 ** (attempt - 1), MAX_BACKOFF))
    return PostResult(False, retries + 1, error)


def _sleep(seconds: float) -> None:
    import time

    time.sleep(seconds)
