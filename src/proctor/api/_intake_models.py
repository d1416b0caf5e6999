"""Wire documents of the live intake (ING-7) and the gate (SUP-5)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import ConfigDict, Field

from proctor.api._base_models import WireModel
from proctor.store import RunTrigger, SupervisionRunStatus

if TYPE_CHECKING:
    from proctor.ingest import IntakeReport, PayloadError
    from proctor.supervision import ScheduleOutcome


class PayloadProblemOut(WireModel):
    """One reason a payload was refused."""

    reason: str
    """What is wrong and what to send instead, e.g. ``field "role": expected one of …``."""
    line: int | None = None
    """The 1-based line of a JSONL payload, when the problem is on one line."""


class IntakeRefusal(WireModel):
    """Why a payload was refused; nothing from it was stored."""

    detail: str
    """One sentence: the first problem and what to do."""
    problems: list[PayloadProblemOut] = Field(default_factory=list)
    """Every problem found (at most 50); empty when the body as a whole is unreadable."""

    @classmethod
    def of(cls, error: PayloadError) -> IntakeRefusal:
        """The refusal document for ``error``."""
        return cls(
            detail=str(error),
            problems=[PayloadProblemOut(reason=p.reason, line=p.line) for p in error.problems],
        )


class SupervisionOutcome(WireModel):
    """What live supervision did for one session after the write."""

    target: str
    """The supervised target (a conversation id or ``task:<id>``)."""
    trigger: RunTrigger | Literal["none"]
    """The trigger that fired (``after_reply``, ``every_n_steps`` …) or ``none``; ``none``
    for a queued analysis (its job decides when it reads the conversation)."""
    status: SupervisionRunStatus | Literal["queued", "waiting", "error"]
    """``queued`` when live intake queued the analysis (it runs in the background, its
    findings appear in ``/api/findings``); ``ok``, ``unavailable`` or ``failed`` when an
    analysis ran; ``waiting`` when it was throttled, in flight or over budget (it runs
    later); ``error`` when the target could not be read."""
    findings: int = 0
    """Findings the analysis recorded."""
    detail: str | None = None
    """Why it is waiting, or what failed."""

    @classmethod
    def of(cls, outcome: ScheduleOutcome) -> SupervisionOutcome:
        """The wire form of one scheduler outcome."""
        from proctor.supervision import QUEUED

        label = outcome.target.label
        if outcome.error is not None:
            return cls(target=label, trigger=outcome.trigger, status="error", detail=outcome.error)
        if outcome.refused == QUEUED:
            return cls(target=label, trigger=outcome.trigger, status=QUEUED)
        if outcome.result is None:
            return cls(
                target=label, trigger=outcome.trigger, status="waiting", detail=outcome.refused
            )
        run = outcome.result.run
        return cls(
            target=label,
            trigger=outcome.trigger,
            status=run.status,
            findings=run.findings,
            detail=run.error,
        )


class IntakeWarning(WireModel):
    """Something stored with a caveat (a link to an id the request did not carry …)."""

    reason: str
    """What was noticed."""
    line: int | None = None
    """The 1-based line of a JSONL payload, when known."""


class IntakeResult(WireModel):
    """What one intake request stored and what supervision did about it."""

    conversation_ids: list[str]
    """Every conversation the request created or extended, parents first."""
    conversations_created: int
    """Conversations that did not exist before."""
    sources_added: int
    """Messages, tool calls and task events stored for the first time."""
    sources_revised: int
    """Known ones whose content changed (a new revision)."""
    sources_unchanged: int
    """Known ones sent again unchanged (nothing written)."""
    redactions: int
    """Secrets replaced before storage."""
    warnings: list[IntakeWarning]
    """Caveats; the request was still stored."""
    supervision: list[SupervisionOutcome]
    """One entry per enabled supervision session the new events concerned (``queued``)."""

    @classmethod
    def of(cls, report: IntakeReport, outcomes: list[ScheduleOutcome]) -> IntakeResult:
        """The wire form of an intake report and the supervision it fired."""
        return cls(
            conversation_ids=report.conversation_ids,
            conversations_created=report.conversations_created,
            sources_added=report.sources_added,
            sources_revised=report.sources_revised,
            sources_unchanged=report.sources_unchanged,
            redactions=report.redactions,
            warnings=[IntakeWarning(reason=w.reason, line=w.line) for w in report.warnings],
            supervision=[SupervisionOutcome.of(o) for o in outcomes],
        )


class OtlpPartialSuccess(WireModel):
    """OTLP ``ExportTracePartialSuccess``: spans the server did not keep, and why."""

    model_config = ConfigDict(populate_by_name=True)

    rejected_spans: str = Field(alias="rejectedSpans", pattern=r"^[0-9]+$")
    """How many spans were dropped (an int64, written as a string as OTLP/JSON does)."""
    error_message: str = Field(alias="errorMessage")
    """Why (spans without GenAI or OpenInference data are not conversations)."""


class OtlpExportResponse(WireModel):
    """OTLP ``ExportTraceServiceResponse`` / ``ExportLogsServiceResponse`` (JSON encoding)."""

    model_config = ConfigDict(populate_by_name=True)

    partial_success: OtlpPartialSuccess | None = Field(default=None, alias="partialSuccess")
    """Present only when some spans were dropped."""
