"""Import files into the store: detect, read, prepare, write — one transaction per conversation.

A read unit (a file, or a session with its sub-agent files) whose bytes are unchanged
since its last import, read by the same adapter version, is skipped without parsing.
Everything else is read and handed to the store, which writes only what changed, so
re-importing the same file writes nothing (SPEC ING-2) and a crash mid-import leaves
each conversation either fully old or fully new (ING-9, STO-3).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from proctor.errors import ConversationWriteError
from proctor.ingest._reading import (
    DIGEST_MARK,
    RowsItem,
    UnitTask,
    auto_jobs,
    fewer_collections,
    legacy_unit_digest,
    prepared_units,
    unit_bytes,
    unit_digest,
)
from proctor.sources import (
    Limits,
    Plan,
    ReadUnit,
    SourceAdapter,
    default_adapters,
    plan_import,
    unreadable_unit,
)
from proctor.store import ConversationRows, ImportBatch, ImportedFile, ImportRecord, Store
from proctor.transcript import SourceIssue, clean_text

ProgressCallback = Callable[[int, str], None]
"""Called after each read unit with the bytes it covered and its path."""


@dataclass(slots=True)
class FormatStats:
    """What one format contributed to an import."""

    units: int = 0
    conversations: int = 0
    messages: int = 0
    tool_calls: int = 0
    subagents: int = 0
    written: int = 0
    skipped_unchanged: int = 0
    """Read units skipped because their bytes did not change since the last import."""


@dataclass(slots=True)
class IngestReport:
    """The outcome of one import."""

    import_id: str
    paths: tuple[str, ...]
    files: int = 0
    units: int = 0
    conversations: int = 0
    conversations_written: int = 0
    sources_added: int = 0
    sources_revised: int = 0
    sources_unchanged: int = 0
    sources_updated: int = 0
    redactions: int = 0
    redactions_by_kind: dict[str, int] = field(default_factory=dict)
    truncated: int = 0
    reasoning_removed: int = 0
    skipped_files: int = 0
    """Files met in folders that are not transcripts."""
    conversation_ids: list[str] = field(default_factory=list)
    by_format: dict[str, FormatStats] = field(default_factory=dict)
    issues: list[SourceIssue] = field(default_factory=list)
    interrupted: list[ImportRecord] = field(default_factory=list)
    """Earlier imports whose process died before they finished, marked ``interrupted``
    when this one started."""

    @property
    def errors(self) -> list[SourceIssue]:
        """Issues of severity error."""
        return [issue for issue in self.issues if issue.severity == "error"]

    @property
    def status(self) -> str:
        """``completed``, or ``completed_with_errors`` when some input could not be read."""
        return "completed_with_errors" if self.errors else "completed"


_LOOKUP_CHUNK = 256
"""Units whose last-import records are read in one query."""

_MAX_KEY_CHARS = 1024
"""The store's limit for a file path; longer paths are kept by prefix and hash."""


def _unit_key(unit: ReadUnit) -> str:
    key = clean_text(str(unit.path.resolve()))
    if len(key) <= _MAX_KEY_CHARS:
        return key
    digest = hashlib.blake2b(os.fsencode(unit.path.resolve()), digest_size=8).hexdigest()
    return f"{key[: _MAX_KEY_CHARS - 17]}~{digest}"


def _unchanged_ids(
    store: Store, adapter: SourceAdapter, unit: ReadUnit, known: ImportedFile | None
) -> tuple[tuple[str, ...] | None, tuple[str, int] | None]:
    """The conversations of a unit imported before with the same bytes (None: read it),
    and the unit's digest and size when they had to be taken to tell.

    A unit never imported (or by another adapter version) is read whatever its bytes:
    its digest is left to whoever reads it (a worker process, with workers).
    ``known``: the unit's record from its last import (None: never imported)."""
    if known is None:
        return None, None
    if (known.adapter, known.adapter_version) != (adapter.name, adapter.version):
        return None, None
    if not known.content_hash.startswith(DIGEST_MARK):
        # Recorded by an import before SHA-256: compared as it was taken; a changed unit
        # is read and recorded with a new digest, taken by its reader.
        digest = legacy_unit_digest(unit)
        if known.content_hash != digest[0]:
            return None, None
    else:
        digest = unit_digest(unit)
        if known.content_hash != digest[0]:
            return None, digest
    ids = known.conversation_ids
    if not ids or len(store.existing_conversation_ids(ids)) != len(ids):
        return None, digest
    return ids, digest


def ingest(
    store: Store,
    paths: Sequence[Path | str],
    *,
    project: str | None = None,
    format_name: str | None = None,
    limits: Limits | None = None,
    adapters: Sequence[SourceAdapter] | None = None,
    progress: ProgressCallback | None = None,
    force: bool = False,
    jobs: int | None = None,
) -> IngestReport:
    """Import transcripts under ``paths`` into ``store``.

    Args:
        store: where to write.
        paths: files or folders; folders are walked and files recognised by content.
        project: project for every conversation (default: from the transcript, e.g. its cwd).
        format_name: read every file with this adapter instead of detecting.
        limits: storage bounds for tool outputs and messages.
        adapters: adapters to detect from (default: all built-ins).
        progress: called after each read unit with its size in bytes.
        force: read units even when their bytes did not change since the last import.
        jobs: processes reading and preparing, this one included (None: 1 for small
            inputs, up to 4 for large ones; ``_reading.reading_workers``).
    """
    plan = plan_import(
        [Path(p) for p in paths], adapters or default_adapters(), format_name=format_name
    )
    return ingest_plan(
        store,
        plan,
        paths=tuple(str(p) for p in paths),
        project=project,
        format_name=format_name,
        limits=limits,
        progress=progress,
        force=force,
        jobs=jobs,
    )


def ingest_plan(
    store: Store,
    plan: Plan,
    *,
    paths: tuple[str, ...],
    project: str | None = None,
    format_name: str | None = None,
    limits: Limits | None = None,
    progress: ProgressCallback | None = None,
    force: bool = False,
    jobs: int | None = None,
) -> IngestReport:
    """Import the read units of an already computed plan (see ``ingest``).

    ``jobs``: processes reading, this one included (None: decided by the input's size).
    """
    paths = tuple(clean_text(path) for path in paths)  # a name with undecodable bytes
    report = IngestReport(import_id="", paths=paths, issues=list(plan.issues))
    report.skipped_files = len(plan.skipped)
    report.interrupted = store.mark_interrupted_imports()
    report.import_id = store.begin_import(paths, format_name=format_name, project=project)
    if jobs is None:
        jobs = auto_jobs(sum(unit_bytes(unit) for _, unit in plan.units))
    status = "failed"
    try:
        with fewer_collections(), _Batches(store) as batches:
            tasks = _changed_units(store, plan, report, progress, force)
            for task, items in prepared_units(tasks, limits, jobs):
                _write_unit(batches.current(), task, items, report, project)
                batches.wrote()
                if progress is not None:
                    progress(task.size, str(task.unit.path))
        status = report.status
    finally:
        report.issues = [_printable(issue) for issue in report.issues]
        store.finish_import(report.import_id, _record(report, status), report.issues)
    return report


def _printable(issue: SourceIssue) -> SourceIssue:
    """An issue as stored and shown: text every store and terminal takes (a file name
    with undecodable bytes, a NUL quoted from a record)."""
    path, reason = clean_text(issue.path), clean_text(issue.reason)
    if (path, reason) == (issue.path, issue.reason):
        return issue
    return SourceIssue(path, reason, issue.line, issue.severity)


def _changed_units(
    store: Store, plan: Plan, report: IngestReport, progress: ProgressCallback | None, force: bool
) -> Iterator[UnitTask]:
    """Units whose bytes changed since their last import; the others are counted and skipped."""
    # Pop units as they go so their samples are freed on the way.
    pending = [(adapter, unit, _unit_key(unit)) for adapter, unit in reversed(plan.units)]
    plan.units.clear()
    records: dict[str, ImportedFile | None] = {}
    while pending:
        adapter, unit, key = pending.pop()
        if not force and key not in records:
            # The last imports of this unit and the next ones: one query per chunk.
            ahead = [key, *(later for _, _, later in pending[-_LOOKUP_CHUNK:])]
            records = {**dict.fromkeys(ahead), **store.imported_files(ahead)}
        stats = report.by_format.setdefault(adapter.name, FormatStats())
        stats.units += 1
        report.units += 1
        report.files += len(unit.paths)
        known = records.pop(key, None)
        known_ids, digest = (None, None) if force else _unchanged_ids(store, adapter, unit, known)
        if known_ids is None:
            yield UnitTask(adapter, unit, digest, key)
            continue
        assert digest is not None  # compared to tell the unit unchanged
        stats.skipped_unchanged += 1
        report.conversation_ids.extend(known_ids)
        if progress is not None:
            progress(digest[1], str(unit.path))


BATCH_SOURCES = 20_000
"""Sources an import writes in one transaction before it commits (``_Batches``)."""

BATCH_SECONDS = 2.0
"""The longest an import holds a write transaction open, so other writers (a live
intake, a review) wait no longer than this for their turn."""


class _Batches:
    """The import's write transactions: one open at a time, committed once it holds
    ``BATCH_SOURCES`` sources or has been open ``BATCH_SECONDS``, and when the import
    ends; rolled back when the import fails (``store/_import_batch.py``)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._open: contextlib.ExitStack | None = None
        self._batch: ImportBatch | None = None
        self._started = 0.0

    def __enter__(self) -> _Batches:
        return self

    def __exit__(self, kind: object, error: BaseException | None, trace: object) -> None:
        if self._open is not None:
            stack, self._open, self._batch = self._open, None, None
            stack.__exit__(type(error) if error is not None else None, error, None)

    def current(self) -> ImportBatch:
        """The open batch, begun when none is."""
        if self._batch is None:
            stack = contextlib.ExitStack()
            self._batch = stack.enter_context(self._store.import_batch())
            self._open = stack
            self._started = time.monotonic()
        return self._batch

    def wrote(self) -> None:
        """A unit was written: commit when the batch is full or old enough."""
        batch = self._batch
        if batch is None:
            return
        if batch.sources >= BATCH_SOURCES or time.monotonic() - self._started >= BATCH_SECONDS:
            self.__exit__(None, None, None)


def _write_unit(
    store: ImportBatch,
    task: UnitTask,
    items: Iterable[RowsItem],
    report: IngestReport,
    project: str | None,
) -> None:
    stats = report.by_format[task.adapter.name]
    written_ids: list[str] = []
    for item in _guarded(task, items):
        if isinstance(item, SourceIssue):
            report.issues.append(item)
            continue
        try:
            written_ids.append(_write_bundle(store, item, report, stats, project))
        except ConversationWriteError as exc:
            report.issues.append(SourceIssue(str(task.unit.path), str(exc)))
    if written_ids:
        assert task.digest is not None  # taken by the reader (``prepared_units``)
        content_hash, size = task.digest
        store.record_imported_file(
            ImportedFile(
                path=task.key if task.key is not None else _unit_key(task.unit),
                content_hash=content_hash,
                size=size,
                adapter=task.adapter.name,
                adapter_version=task.adapter.version,
                conversation_ids=tuple(written_ids),
            )
        )


def _guarded(task: UnitTask, items: Iterable[RowsItem]) -> Iterator[RowsItem]:
    """``items``, with a failure the adapter or preparation did not foresee (a bug to
    report) turned into one issue for the unit: what came before it is still written."""
    try:
        yield from items
    except Exception as exc:  # RecursionError included: the import goes on
        yield unreadable_unit(task.adapter, task.unit, exc)


def _write_bundle(
    store: ImportBatch,
    rows: ConversationRows,
    report: IngestReport,
    stats: FormatStats,
    project: str | None,
) -> str:
    outcome = store.write_rows(rows, project=project)
    report.issues.extend(rows.issues)
    report.conversations += 1
    report.conversation_ids.append(outcome.conversation_id)
    report.conversations_written += outcome.changed
    report.sources_added += outcome.added
    report.sources_revised += outcome.revised
    report.sources_unchanged += outcome.unchanged
    report.sources_updated += outcome.updated
    report.redactions += rows.redactions
    for kind, count in rows.redactions_by_kind.items():
        report.redactions_by_kind[kind] = report.redactions_by_kind.get(kind, 0) + count
    report.truncated += rows.truncated
    report.reasoning_removed += rows.reasoning_removed
    stats.conversations += 1
    stats.messages += rows.messages
    stats.tool_calls += rows.tool_calls
    stats.subagents += rows.subagent_run is not None
    stats.written += outcome.changed
    if outcome.shared:
        report.issues.append(
            SourceIssue(
                rows.origin or rows.conversation_id,
                f"{len(outcome.shared)} message(s) already belong to another conversation "
                "(a resumed session copies them); they were kept with their first conversation",
                severity="warning",
            )
        )
    return outcome.conversation_id


def _record(report: IngestReport, status: str) -> ImportRecord:
    from proctor._util.clock import utcnow

    now = utcnow()
    return ImportRecord(
        import_id=report.import_id,
        started_at=now,
        finished_at=now,
        status=status,
        paths=report.paths,
        files=report.files,
        conversations=report.conversations,
        conversations_written=report.conversations_written,
        sources_added=report.sources_added,
        sources_revised=report.sources_revised,
        sources_unchanged=report.sources_unchanged,
        redactions=report.redactions,
        issues=len(report.issues),
    )
