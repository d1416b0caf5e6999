"""Proctor's exception hierarchy.

Every error a user can meet is a ``ProctorError`` whose message says what happened and
what to do. The CLI prints these without a traceback; anything else is a bug.

    ProctorError
    ├── ConfigError            a setting, option or policy file is wrong
    │   ├── AppDisabledError   the supervisor app is off: automatic and manual runs refused
    │   ├── EntryNameError     a knowledge-base entry name that could escape its folder
    │   └── ReadOnlyBaseError  a write to an external (read-only) knowledge base
    ├── SourceError            an input file or record cannot be read (file, line, reason)
    │   ├── UnknownFormatError no adapter recognises the input
    │   └── PayloadError       an intake payload was refused; ``problems`` lists why
    ├── StoreError             the database cannot be opened, migrated or written
    │   ├── MigrationError     a schema migration failed; the database is unchanged
    │   └── ConversationWriteError  one conversation's data was refused; nothing of it written
    ├── NotFoundError          an id given by the user does not exist
    ├── BusyError              another run holds the one execution slot
    │   └── ExecutingElsewhere  a job's run executes in another live worker (retried)
    ├── ReviewStateError       a review run cannot do that now (resume a cancelled run)
    ├── SuggestionError        phrasing or saving suggestions failed; the published graph stands
    ├── SuggestionStateError   a suggestion was decided the other way (accept an ignored one)
    ├── UndoRefusedError       a bulk finding change cannot be undone (already, or changed since)
    ├── StaleEntryError        a knowledge-base entry changed since its preview
    ├── ToolRefusal            the MCP server will not answer a tool call
    ├── SemanticBatchError     a review leaf or merge gave no valid answer (a failed batch)
    └── ModelError             a model call failed; ``kind`` says how: config, auth,
                               rejected, rate_limited, server, connection, timeout,
                               capacity, length, bad_response

The classes outside this module live next to their one use: ``knowledge`` (EntryNameError,
ReadOnlyBaseError, StaleEntryError), ``ingest`` (PayloadError), ``store`` (UndoRefusedError),
``mcp`` (ToolRefusal), ``review.semantic`` (SemanticBatchError) and ``jobs``
(ExecutingElsewhere). A test
(``tests/test_errors.py``) checks this drawing against every ``ProctorError`` subclass in
the code and the kinds against ``ModelErrorKind``.

Per-record problems inside an import are not raised: they become ``SourceIssue`` data
and the import goes on. Only infrastructure failures stop a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args


class ProctorError(Exception):
    """Base class of every error Proctor reports to a user."""


class ConfigError(ProctorError):
    """A setting, command-line option or policy file is invalid."""


class AppDisabledError(ConfigError):
    """The supervisor app is disabled (HB-1): nothing automatic runs, requests are refused.

    A setting to fix (exit status 2): ``proctor app enable`` turns it on.
    """


class SourceError(ProctorError):
    """An input file (or one record in it) cannot be read."""

    def __init__(self, path: Path | str | None, reason: str, *, line: int | None = None) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.reason = reason
        where = self.path or "<input>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {reason}")


class UnknownFormatError(SourceError):
    """No adapter recognises the input's content."""


class StoreError(ProctorError):
    """The database cannot be opened, migrated or written."""


class MigrationError(StoreError):
    """A schema migration failed; the database was left at its previous version."""


class ConversationWriteError(StoreError):
    """One conversation could not be written (its data broke a constraint); it was rolled back."""


class NotFoundError(ProctorError):
    """A conversation, project or other id given by the user does not exist."""


class BusyError(ProctorError):
    """The one execution slot is taken; try again when the running job ends."""


class ReviewStateError(ProctorError):
    """A review run is in a state that does not allow the request (e.g. resume after cancel)."""


class SuggestionError(ProctorError):
    """Suggestions could not be phrased or saved; the published result is untouched (HB-6).

    ``proctor suggestions retry`` makes them again from the same result. ``calls`` and
    the token counts say what the failed attempt cost.
    """

    def __init__(
        self, message: str, *, calls: int = 0, input_tokens: int = 0, output_tokens: int = 0
    ) -> None:
        super().__init__(message)
        self.calls = calls
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens


class SuggestionStateError(ProctorError):
    """A suggestion was already decided the other way (accepting an ignored one)."""


ModelErrorKind = Literal[
    "config",
    "auth",
    "rejected",
    "rate_limited",
    "server",
    "connection",
    "timeout",
    "capacity",
    "length",
    "bad_response",
]
"""How a model call failed (``ModelError.kind``); see ``ModelError`` for what each means."""

MODEL_ERROR_KINDS: tuple[ModelErrorKind, ...] = get_args(ModelErrorKind)
"""Every ``ModelErrorKind``, in the order above."""

RETRYABLE_MODEL_ERRORS: frozenset[ModelErrorKind] = frozenset(
    {"rate_limited", "server", "connection"}
)
"""The kinds worth retrying: 429, 5xx and dropped connections. The model caller retries
these once at once; a background job (``proctor.jobs``) also retries them later, together
with ``timeout``. The one list of retryable model errors."""


class ModelError(ProctorError):
    """A model call failed. ``kind`` tells retryable failures from settings to fix.

    Kinds: ``config`` (a setting to fix: missing or broken connection, wrong model or
    endpoint), ``auth`` (the key), ``rejected`` (this request refused, e.g. too long),
    ``rate_limited``, ``server``, ``connection`` (these three retried once), ``timeout``,
    ``capacity`` (response over the limit), ``length`` (answer cut at the token limit),
    ``bad_response`` (not the provider's wire format).
    """

    RETRYABLE = RETRYABLE_MODEL_ERRORS

    def __init__(self, kind: ModelErrorKind, message: str, *, status: int | None = None) -> None:
        self.kind: ModelErrorKind = kind
        self.status = status
        super().__init__(message)

    @property
    def retryable(self) -> bool:
        """429, 5xx and dropped connections are worth one retry; nothing else is."""
        return self.kind in self.RETRYABLE
