"""Desktop notifications for ``proctor watch --desktop-notify``.

``NotificationFollower`` finds the notifications written since the watch started, by
any process (the watch's own supervision, ``proctor check``, ``proctor serve``);
``DesktopNotifier`` shows each with the platform's own tool — ``notify-send`` on Linux,
``osascript`` on macOS — started detached and killed after ``TIMEOUT`` seconds, so the
watch never waits for it. Elsewhere, or when the tool is not installed, it is off and
says so once.

The title and body are passed as arguments, never through a shell or inside a script:
the finding's title may quote what an agent ran. ``notify-send`` bodies may be read as
markup by the notification server, so ``&``, ``<`` and ``>`` are escaped there.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from datetime import datetime

from proctor.store import Notification, SqlStore

TIMEOUT = 10.0
"""Seconds a desktop notification command may run before it is killed."""
_TOOLS = {"linux": "notify-send", "darwin": "osascript"}
_APPLESCRIPT = (
    "on run argv",
    "display notification (item 2 of argv) with title (item 1 of argv)",
    "end run",
)


def _escape_markup(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def desktop_command(
    notification: Notification, *, platform: str = sys.platform, tool: str | None = None
) -> list[str] | None:
    """The command that shows ``notification`` on this platform (None where there is none).

    ``tool`` is the path of the platform's program (found on PATH when not given).
    """
    name = next((n for prefix, n in _TOOLS.items() if platform.startswith(prefix)), None)
    if name is None:
        return None
    program = tool or shutil.which(name)
    if program is None:
        return None
    title = f"Proctor · {notification.severity}: {' '.join(notification.title.split())}"[:200]
    body = (
        f"{notification.project} · {notification.conversation_title or notification.conversation_id}"
        f"\nproctor findings show {notification.finding_id[:12]}"
    )
    if name == "notify-send":
        urgency = "critical" if notification.severity in ("critical", "high") else "normal"
        return [
            program,
            "--app-name=Proctor",
            f"--urgency={urgency}",
            "--",
            title,
            _escape_markup(body),
        ]
    script = [part for line in _APPLESCRIPT for part in ("-e", line)]
    return [program, *script, title, body]


class DesktopNotifier:
    """Shows notifications on the desktop, when the platform offers a way."""

    def __init__(self, *, platform: str = sys.platform) -> None:
        self.platform = platform
        name = next((n for prefix, n in _TOOLS.items() if platform.startswith(prefix)), None)
        self.tool = shutil.which(name) if name else None
        self.why_off: str | None = None
        """Why nothing will be shown (None when notifications are on)."""
        if name is None:
            self.why_off = f"no desktop notifications on {platform}"
        elif self.tool is None:
            self.why_off = f"{name} is not installed"

    @property
    def on(self) -> bool:
        """True when notifications can be shown."""
        return self.why_off is None

    def show(self, notification: Notification) -> bool:
        """Start showing ``notification`` (detached); False when it cannot be shown."""
        command = desktop_command(notification, platform=self.platform, tool=self.tool)
        if command is None:
            return False
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            return False
        threading.Thread(target=_reap, args=(process,), daemon=True).start()
        return True


def _reap(process: subprocess.Popen[bytes]) -> None:
    try:
        process.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class NotificationFollower:
    """The notifications written since it started, each returned once."""

    def __init__(self, store: SqlStore) -> None:
        self._store = store
        self._after: datetime | None = store.latest_notification_time()
        self._seen: set[str] = set()
        if self._after is not None:
            self._seen = {n.key for n in store.notifications_since(self._after, limit=1000)}

    def new(self) -> list[Notification]:
        """Notifications written since the last call, oldest first."""
        if self._after is None:
            found = self._store.notifications_since(None, limit=1000)
        else:
            found = self._store.notifications_since(self._after, seen=list(self._seen))
        for notification in found:
            if self._after is None or notification.created_at > self._after:
                self._after = notification.created_at
                self._seen = set()
            self._seen.add(notification.key)
        return found
