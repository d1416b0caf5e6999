"""The background indexer: keeps a store's search index current while a server runs.

``proctor mcp`` and ``proctor serve`` answer searches for as long as they run, while
messages keep arriving (imports, the intake API, other processes). One thread per process
brings the index up to date: a full-text pass whenever the sources changed (a signature
check every ``interval`` seconds costs two aggregate queries), then sentence embeddings
for the documents that lack them, a chunk at a time. A search calls
:meth:`BackgroundIndexer.catch_up` first, which runs a full-text pass on the caller's
thread (cheap, and cut short after a few seconds: the next pass goes on) while the
embedding carries on beside it; a search never waits for embeddings. Embedding takes the
store's indexer lock (``_handoff.py``) and keeps it while the thread runs; while a detached
indexer (``proctor ingest``'s hand-off) holds it, the thread leaves embedding to that one. Full-text passes take
turns (one lock); every write is its own short transaction. Failures are kept
(``state.error``) and reported in search answers; the thread goes on at the next interval.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from proctor._util.clock import utcnow
from proctor.search._catalog import hold_vectors
from proctor.search._embed import embed_pending
from proctor.search._encoder import TextEncoder
from proctor.search._handoff import IndexerLock
from proctor.search._index import IndexReport, index_full_text
from proctor.search._postings import refresh_postings
from proctor.search._status import IndexStatus
from proctor.search._write import Encoder, resolve_encoder
from proctor.store import SqlStore

logger = logging.getLogger("proctor.search.indexer")

CATCH_UP_SECONDS = 10.0
"""The longest a server's search waits for the full text to catch up before it answers
(saying the hits may be stale): enough for tens of thousands of new documents."""

EMBED_SLICE_SECONDS = 5.0
"""The longest the thread embeds before it checks the sources again."""

Phase = Literal["starting", "full_text", "embedding", "idle", "stopped"]


@dataclass(frozen=True, slots=True)
class IndexerState:
    """What the background indexer is doing and has done since it started."""

    phase: Phase
    passes: int
    """Full-text passes finished."""
    indexed: int
    """Documents (re)written for full text since the start."""
    embedded: int
    """Documents embedded since the start."""
    remaining: int | None
    """Documents still without a vector after the last embedding slice (None: not known yet,
    or no encoder)."""
    last_pass_at: datetime | None
    error: str | None


class BackgroundIndexer:
    """Keeps one store's search index current on a daemon thread of its own.

    Args:
        opener: returns the (writable) store to index; called once, when first needed. A
            failure is kept as the error and retried at the next interval.
        encoder: the sentence encoder, None for full text only, ``"auto"`` for the model
            when it is installed (loaded on the thread, the first time it is needed).
        interval: seconds between checks of the sources when nothing is to do.
        close_store: close the store when the indexer stops (the indexer opened it for
            itself rather than sharing the server's).
    """

    def __init__(
        self,
        opener: Callable[[], SqlStore],
        *,
        encoder: Encoder = "auto",
        interval: float = 2.0,
        close_store: bool = False,
    ) -> None:
        self._opener = opener
        self._encoder_choice = encoder
        self._interval = interval
        self._close_store = close_store
        self._store: SqlStore | None = None
        self._lock: IndexerLock | None = None
        self._full_text = threading.Lock()
        self._opening = threading.Lock()
        self._changed = threading.Condition()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._requested = 0
        self._complete = 0
        self._phase: Phase = "starting"
        self._passes = 0
        self._indexed = 0
        self._embedded = 0
        self._remaining: int | None = None
        self._last_pass_at: datetime | None = None
        self._error: str | None = None
        self._thread = threading.Thread(target=self._run, name="proctor-indexer", daemon=True)

    # -- control ----------------------------------------------------------------------

    def start(self) -> BackgroundIndexer:
        """Start the thread (once)."""
        if not self._thread.is_alive() and not self._stop.is_set():
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop after the chunk under way (embedding stops between chunks); a thread still
        busy after ``timeout`` seconds (loading the model) is left to end with the process."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        with self._changed:
            self._phase = "stopped"
            self._changed.notify_all()
        if self._lock is not None:
            self._lock.release()
        if self._close_store and self._store is not None:
            self._store.close()

    def catch_up(self, timeout: float) -> bool:
        """Bring the full text up to date now, on the caller's thread, within ``timeout``.

        True when every source stored before the call is searchable by full text; False
        when the time ran out first (the pass goes on in the background), when the pass
        failed (the error is kept), or when the indexer is not running.
        """
        if not self._thread.is_alive():
            return False
        started = time.monotonic()
        if not self._full_text.acquire(timeout=timeout):
            return False
        try:
            report = index_full_text(
                self._open(), seconds=max(0.0, timeout - (time.monotonic() - started))
            )
        except Exception as exc:  # kept and reported; the background pass tries again
            self._failed(exc)
            return False
        finally:
            self._full_text.release()
        self._passed(report)
        return report.complete

    def wait_complete(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) until every source stored before the call is
        indexed and every document embedded (tests, demos); False on timeout or failure."""
        if not self._thread.is_alive():
            return False
        with self._changed:
            self._requested += 1
            wanted = self._requested
            self._wake.set()
            done = self._changed.wait_for(
                lambda: self._complete >= wanted or self._phase == "stopped", timeout
            )
            return bool(done) and self._complete >= wanted and self._error is None

    @property
    def running(self) -> bool:
        """Whether the thread is alive."""
        return self._thread.is_alive()

    @property
    def state(self) -> IndexerState:
        """A snapshot of what the indexer is doing."""
        with self._changed:
            return IndexerState(
                phase=self._phase,
                passes=self._passes,
                indexed=self._indexed,
                embedded=self._embedded,
                remaining=self._remaining,
                last_pass_at=self._last_pass_at,
                error=self._error,
            )

    def annotate(self, status: IndexStatus) -> IndexStatus:
        """``status`` with this indexer's part: whether it is working on it, its error."""
        return status.with_indexer(
            indexing=self.running and status.stale and self._error is None, error=self._error
        )

    # -- the thread -------------------------------------------------------------------

    def _run(self) -> None:
        encoder: TextEncoder | Literal["unloaded"] | None = "unloaded"
        while not self._stop.is_set():
            self._wake.clear()
            with self._changed:
                wanted = self._requested
            busy = False
            try:
                self._set_phase("full_text")
                with self._full_text:
                    report = index_full_text(self._open())
                self._passed(report)
                if not self._stop.is_set():
                    self._refresh_postings(self._open())
                if encoder == "unloaded":
                    encoder = resolve_encoder(self._encoder_choice)
                if encoder is not None and not self._stop.is_set():
                    busy = self._embed_slice(self._open(), encoder)
                if not busy and (encoder is None or self._remaining == 0):
                    with self._changed:
                        self._complete = max(self._complete, wanted)
                        self._changed.notify_all()
            except Exception as exc:  # kept and reported; the next interval tries again
                self._failed(exc)
            self._set_phase("idle")
            if not busy:
                self._wake.wait(self._interval)

    def _open(self) -> SqlStore:
        with self._opening:
            if self._store is None:
                self._store = self._opener()
                # A long-running process: rank from an in-memory copy of the index.
                hold_vectors(self._store)
            return self._store

    def _passed(self, report: IndexReport) -> None:
        with self._changed:
            self._indexed += report.added + report.updated
            if report.complete:
                self._passes += 1
                self._last_pass_at = utcnow()
            self._error = None
            self._changed.notify_all()

    def _failed(self, exc: Exception) -> None:
        logger.warning("search indexing failed: %s", exc, exc_info=True)
        with self._changed:
            self._error = f"{type(exc).__name__}: {exc}"
            self._changed.notify_all()

    def _refresh_postings(self, store: SqlStore) -> None:
        """Build the common words' postings when due (``_postings.py``), holding the
        store's indexer lock (another process's indexer at work: its turn). A lock taken
        for this alone is let go after: embedding keeps it while the thread runs, full text
        alone does not (a detached indexer may embed meanwhile)."""
        if self._lock is None:
            self._lock = IndexerLock(store)
        held = self._lock.held
        if not self._lock.acquire():
            return
        try:
            refresh_postings(store, should_stop=self._stop.is_set)
        finally:
            if not held:
                self._lock.release()

    def _embed_slice(self, store: SqlStore, encoder: TextEncoder) -> bool:
        """Embed for a while; True when documents are left and progress was made. Another
        process's indexer at work (``proctor ingest`` handed off): its turn, not ours."""
        if self._lock is None:
            self._lock = IndexerLock(store)
        if not self._lock.acquire():
            return False
        self._set_phase("embedding")

        def count(done: int, total: int) -> None:
            with self._changed:
                self._embedded = base + done
                self._remaining = total - done

        base = self._embedded
        report = embed_pending(
            store,
            encoder,
            seconds=EMBED_SLICE_SECONDS,
            should_stop=self._stop.is_set,
            progress=count,
        )
        with self._changed:
            self._embedded = base + report.embedded
            self._remaining = report.remaining
        return report.remaining > 0 and report.embedded > 0

    def _set_phase(self, phase: Phase) -> None:
        with self._changed:
            if self._phase != "stopped":
                self._phase = phase
            self._changed.notify_all()
