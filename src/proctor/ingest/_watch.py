"""Following session folders (SPEC ING-7): ``proctor watch``.

The watcher imports everything once, then waits for file-system events (inotify through
``watchfiles``). Each batch of changed files is recognised by content and planned into
read units — a changed sub-agent file brings its session along — and those units are
imported. The store writes only what changed, so an appended line costs one new source;
a torn last line (the agent is still writing it) is skipped quietly and read on the
next change.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import watchfiles

from proctor.ingest._ingest import IngestReport, ingest, ingest_plan
from proctor.sources import Limits, SourceAdapter, default_adapters, plan_import
from proctor.store import Store

ReportCallback = Callable[[IngestReport], None]

_TORN_TAIL = "truncated last line"


def _quiet(report: IngestReport) -> IngestReport:
    """Drop torn-tail warnings: in a live folder they only mean 'not finished yet'."""
    report.issues = [i for i in report.issues if not i.reason.startswith(_TORN_TAIL)]
    return report


@dataclass(slots=True)
class Watcher:
    """Imports changes under some folders as they happen."""

    store: Store
    folders: Sequence[Path]
    project: str | None = None
    limits: Limits | None = None
    adapters: Sequence[SourceAdapter] = field(default_factory=default_adapters)
    debounce_ms: int = 300

    def sync(self) -> IngestReport:
        """Import everything under the folders (unchanged files are skipped quickly)."""
        return _quiet(
            ingest(
                self.store,
                self.folders,
                project=self.project,
                limits=self.limits,
                adapters=self.adapters,
            )
        )

    def import_changes(self, changed: Iterable[Path]) -> IngestReport | None:
        """Import the read units that contain ``changed`` files; None when none are transcripts."""
        files = sorted({p for p in changed if p.is_file() and not p.name.startswith(".")})
        if not files:
            return None
        plan = plan_import(files, self.adapters)
        plan.issues = [i for i in plan.issues if "format not recognised" not in i.reason]
        if not plan.units and not plan.issues:
            return None
        report = ingest_plan(
            self.store,
            plan,
            paths=tuple(str(f) for f in files),
            project=self.project,
            limits=self.limits,
        )
        return _quiet(report)

    def run(
        self,
        on_report: ReportCallback,
        stop: threading.Event | None = None,
        *,
        on_idle: Callable[[], None] | None = None,
    ) -> None:
        """Sync once, then import changes until ``stop`` is set (or forever).

        The sync runs only once the file-system watch is in place, so a line appended
        between the sync and the first event cannot be missed. ``on_idle`` is called
        whenever a quiet interval passes with no change (about every 200 ms).
        """
        synced = False
        for changes in watchfiles.watch(
            *self.folders,
            stop_event=stop,
            debounce=self.debounce_ms,
            step=50,
            rust_timeout=200,
            yield_on_timeout=True,
            raise_interrupt=False,
        ):
            if not synced:
                on_report(self.sync())  # also covers any change seen before it
                synced = True
                continue
            changed = [
                Path(path) for change, path in changes if change != watchfiles.Change.deleted
            ]
            if not changed:
                if on_idle is not None:
                    on_idle()
                continue
            report = self.import_changes(changed)
            if report is not None:
                on_report(report)


def watch(
    store: Store,
    folders: Sequence[Path],
    on_report: ReportCallback,
    *,
    project: str | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Follow ``folders`` and import what changes; returns when ``stop`` is set."""
    Watcher(store, folders, project=project).run(on_report, stop)
