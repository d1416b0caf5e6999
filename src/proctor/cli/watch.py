"""``proctor watch``: follow agent session folders and import changes as they happen."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import click

from proctor._util.clock import utcnow
from proctor.cli._common import console, writable_store
from proctor.cli._render import when
from proctor.cli.supervise import outcome_line
from proctor.errors import ConfigError, ProctorError
from proctor.ingest import IngestReport, Watcher, default_session_folders
from proctor.notify import DesktopNotifier, NotificationFollower, WebhookThread
from proctor.search import BackgroundIndexer
from proctor.store import SqlStore, Store
from proctor.supervision import LiveSupervision, ScheduleOutcome


@click.command("watch")
@click.argument("folders", nargs=-1, type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--project", help="Put every imported conversation in this project.")
@click.option(
    "--desktop-notify/--no-desktop-notify",
    default=False,
    show_default=True,
    help="Show each new notification on the desktop (notify-send on Linux, osascript on macOS).",
)
def watch_command(folders: tuple[Path, ...], project: str | None, desktop_notify: bool) -> None:
    """Follow Claude Code / Codex session folders and import lines as they are appended.

    With no FOLDER, follows ~/.claude/projects and ~/.codex/sessions when they exist.
    Notifications (written by this watch's supervision or by any other Proctor process) go
    to the policies' webhooks, and with --desktop-notify to the desktop. Stop with Ctrl-C.
    """
    chosen = list(folders) or default_session_folders()
    if not chosen:
        raise ConfigError(
            "no folder given and no agent session folders found; name the folders to follow"
        )

    def report(result: IngestReport) -> None:
        if not (result.conversations_written or result.issues):
            return
        line = (
            f"{when(utcnow())}  {result.conversations_written} conversation(s) updated · "
            f"{result.sources_added} new, {result.sources_revised} revised sources"
        )
        if result.issues:
            line += f" · {len(result.issues)} issue(s)"
        console.print(line, markup=False)
        for issue in result.errors[:5]:
            console.print(f"  error: {issue}", markup=False)

    stop = threading.Event()
    console.print(
        "Following " + ", ".join(str(f) for f in chosen) + " (Ctrl-C to stop)", markup=False
    )
    with writable_store() as store, BackgroundSupervision(store) as supervision:
        webhooks = WebhookThread(lambda: store)
        webhooks.start()
        # Searches find what was imported: full text at once, embeddings as they come.
        indexer = BackgroundIndexer(lambda: store).start()
        desktop = desktop_notifications(store) if desktop_notify else None

        def imported(result: IngestReport) -> None:
            report(result)
            supervision.changed(result.conversation_ids)

        def idle() -> None:
            supervision.tick()
            if desktop is not None:
                desktop()

        try:
            Watcher(store, chosen, project=project).run(imported, stop, on_idle=idle)
        except KeyboardInterrupt:
            stop.set()
        finally:
            webhooks.stop()
            indexer.stop()
    console.print("Stopped.")


def desktop_notifications(store: Store, every: float = 1.0) -> Callable[[], None] | None:
    """What the idle loop calls to show new notifications on the desktop (at most every
    ``every`` seconds); None, after saying why, where the platform offers no way."""
    notifier = DesktopNotifier()
    if not notifier.on:
        console.print(f"Desktop notifications off: {notifier.why_off}.", markup=False)
        return None
    assert isinstance(store, SqlStore)
    follower = NotificationFollower(store)
    console.print(f"Desktop notifications on ({notifier.tool}).", markup=False)
    last = 0.0

    def show_new() -> None:
        nonlocal last
        if time.monotonic() - last < every:
            return
        last = time.monotonic()
        try:
            for notification in follower.new():
                notifier.show(notification)
        except ProctorError as exc:
            console.print(f"desktop notifications: {exc}", markup=False)

    return show_new


class BackgroundSupervision:
    """Live supervision on one worker thread, so imports never wait for a model.

    Triggered analyses run in order on that thread; idle ticks are skipped while it is
    busy (the scheduler keeps anything due as pending, so nothing is lost).
    """

    def __init__(self, store: Store) -> None:
        self._live = LiveSupervision(store)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="supervision")
        self._busy: Future[None] | None = None

    def changed(self, conversation_ids: Sequence[str]) -> None:
        """Schedule the analyses that newly written conversations trigger."""
        if conversation_ids:
            ids = list(conversation_ids)
            self._busy = self._worker.submit(self._print, lambda: self._live.changed(ids))

    def tick(self) -> None:
        """While idle, start analyses that became due (throttle ended, run ended)."""
        if self._busy is None or self._busy.done():
            self._busy = self._worker.submit(self._print, self._live.tick)

    @staticmethod
    def _print(outcomes: Callable[[], list[ScheduleOutcome]]) -> None:
        try:
            lines = [outcome_line(o) for o in outcomes()]
        except ProctorError as exc:
            lines = [f"supervision: {exc}"]
        for line in lines:
            console.print(f"{when(utcnow())}  {line}", markup=False)

    def __enter__(self) -> BackgroundSupervision:
        return self

    def __exit__(self, *exc: object) -> None:
        self._worker.shutdown(wait=True, cancel_futures=True)
