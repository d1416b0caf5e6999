"""Delivering notifications beyond Proctor's own list (SPEC SUP-8).

A notification is written once per finding key (``store``); from there it reaches the
person through ``proctor notifications``, the API and the web UI's badge, and — where
the user asks — through two more channels that never hold up the process that wrote it:

- the policy's webhook (``[notify] webhook_url``): a JSON body POSTed with retries and
  backoff by a background thread (``proctor serve``, ``proctor watch``) or a detached
  process (``proctor check``, ``proctor ingest``), each notification claimed once;
- a desktop notification from ``proctor watch --desktop-notify`` (``notify-send`` on
  Linux, ``osascript`` on macOS), run detached with a time limit.
"""

from proctor.notify._deliver import (
    DeliveryOutcome,
    WebhookThread,
    deliver_webhooks,
    hand_off_webhooks,
    settle_pending,
)
from proctor.notify._desktop import DesktopNotifier, NotificationFollower, desktop_command
from proctor.notify._webhook import PostResult, post_webhook, webhook_body

__all__ = [
    "DeliveryOutcome",
    "DesktopNotifier",
    "NotificationFollower",
    "PostResult",
    "WebhookThread",
    "deliver_webhooks",
    "desktop_command",
    "hand_off_webhooks",
    "post_webhook",
    "settle_pending",
    "webhook_body",
]
