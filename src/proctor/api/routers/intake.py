"""Live intake (ING-7): Proctor JSONL events and OTLP/HTTP trace exports.

Both endpoints validate the whole payload before storing anything, write each
conversation in one transaction (extending conversations earlier requests started), then
queue live supervision for the conversations written: the analyses run in the background
(this process's analysis queue on SQLite, ``proctor worker`` jobs on PostgreSQL), so the
answer never waits for a model; it lists the analyses queued.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import orjson
from fastapi import APIRouter, FastAPI, Header, HTTPException, Query, Request
from fastapi.responses import JSONResponse, Response

from proctor.api._body import read_body, require_media_type
from proctor.api._deps import StoreDep
from proctor.api._intake_models import (
    IntakeRefusal,
    IntakeResult,
    OtlpExportResponse,
    OtlpPartialSuccess,
)
from proctor.api._otlp_proto import PROTOBUF, decode_protobuf, encode_response
from proctor.ingest import MAX_PAYLOAD_BYTES
from proctor.store import SqlStore

if TYPE_CHECKING:
    from proctor.ingest import Intake, IntakeReport, PayloadError
    from proctor.jobs import AnalysisQueue
    from proctor.supervision import ScheduleOutcome

# The intake itself (and with it every source adapter) is imported by the first request
# that stores something, not when the server starts.

router = APIRouter(prefix="/intake", tags=["intake"])

otlp_router = APIRouter(tags=["intake"])
"""Included under ``/v1``: ``POST /v1/traces`` is where OTLP/HTTP exporters send spans."""

_JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/json")
"""Not text/plain: any web page may send that to any address (the request guard refuses it)."""
_OTLP_TYPES = ("application/json", PROTOBUF)
_LIMIT = f"{MAX_PAYLOAD_BYTES // (1024 * 1024)} MiB"
_intake_lock = threading.Lock()

_PROJECT_PATTERN = r"^\S(?:[^\x00-\x1f]*\S)?$"
ProjectName = Annotated[
    str,
    Query(
        min_length=1,
        max_length=200,
        pattern=_PROJECT_PATTERN,
        description="Put the conversations in this project (default: the events' own).",
    ),
]
ProjectHeader = Annotated[
    str | None,
    Header(
        min_length=1,
        max_length=200,
        pattern=_PROJECT_PATTERN,
        description="The project, for clients that can set headers but not the URL "
        "(OTEL_EXPORTER_OTLP_HEADERS=X-Proctor-Project=shop).",
    ),
]

_REFUSALS: dict[int | str, dict[str, Any]] = {
    400: {"model": IntakeRefusal, "description": "The payload is invalid; nothing was stored."},
    413: {"description": f"The body is larger than {_LIMIT}."},
    415: {"description": "The Content-Type (or Content-Encoding) is not accepted."},
}


def _intake(request: Request, store: SqlStore) -> Intake:
    """The app's one intake (created on first use): appends to one conversation in turn."""
    from proctor.ingest import Intake

    with _intake_lock:
        intake: Intake | None = getattr(request.app.state, "intake", None)
        if intake is None or intake.store is not store:
            intake = Intake(store)
            request.app.state.intake = intake
        return intake


def analysis_queue(app: FastAPI, store: SqlStore) -> AnalysisQueue:
    """The app's background analysis queue (created on first use)."""
    from proctor.jobs import AnalysisQueue

    with _intake_lock:
        queue: AnalysisQueue | None = getattr(app.state, "analyses", None)
        if queue is None or queue.store is not store:
            queue = AnalysisQueue(store)
            app.state.analyses = queue
        return queue


def stop_analysis_queue(app: FastAPI) -> None:
    """Wait for the analyses running in the background and start no more (app shutdown)."""
    queue: AnalysisQueue | None = getattr(app.state, "analyses", None)
    if queue is not None:
        queue.stop()


async def _store_and_supervise(
    request: Request, store: SqlStore, take: Callable[[], IntakeReport]
) -> tuple[IntakeReport, list[ScheduleOutcome]]:
    from proctor.jobs import queue_analyses

    def work() -> tuple[IntakeReport, list[ScheduleOutcome]]:
        report = take()
        queue = analysis_queue(request.app, store)
        return report, queue_analyses(store, report.conversation_ids, queue)

    return await anyio.to_thread.run_sync(work)


def _refusal(error: PayloadError) -> JSONResponse:
    return JSONResponse(IntakeRefusal.of(error).model_dump(), status_code=400)


@router.post(
    "/events",
    response_model=IntakeResult,
    responses=_REFUSALS,
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "Proctor JSONL events (docs/proctor-jsonl.md), one JSON object a line.",
            "content": {
                "application/x-ndjson": {"schema": {"type": "string"}},
            },
        }
    },
)
async def post_events(
    request: Request,
    store: StoreDep,
    project: ProjectName | None = None,
    x_proctor_project: ProjectHeader = None,
) -> IntakeResult | JSONResponse:
    """Store Proctor JSONL events; events for a known conversation extend it.

    The whole body is validated first: any bad line is answered 400 naming the line, the
    field and what to send, and nothing is stored. The project comes from ``?project=``
    or the ``X-Proctor-Project`` header (default: the events' own ``project``).
    """
    require_media_type(
        request, _JSONL_TYPES, "send Proctor JSONL as application/x-ndjson (one event a line)"
    )
    from proctor.ingest import PayloadError

    chosen = project or x_proctor_project
    body = await read_body(request)
    intake = _intake(request, store)
    take = partial(intake.events, body, project=chosen, origin="POST /api/intake/events")
    try:
        report, outcomes = await _store_and_supervise(request, store, take)
    except PayloadError as exc:
        return _refusal(exc)
    return IntakeResult.of(report, outcomes)


_OTLP_BODY = {
    "requestBody": {
        "required": True,
        "description": "An OTLP export request: JSON encoding or protobuf (needs proctor[otlp]).",
        "content": {
            "application/json": {"schema": {"type": "object"}},
            PROTOBUF: {"schema": {"type": "string", "format": "binary"}},
        },
    }
}


async def _export(request: Request, store: SqlStore, signal: str, project: str | None) -> Response:
    from proctor.ingest import PayloadError

    kind = require_media_type(
        request,
        _OTLP_TYPES,
        "send OTLP as application/json, or application/x-protobuf with proctor[otlp] installed",
    )
    body = await read_body(request)
    document = decode_protobuf(body, signal) if kind == PROTOBUF else _json_document(body)
    intake = _intake(request, store)
    take = partial(intake.traces, document, project=project, origin=f"POST /v1/{signal}")
    try:
        report, _ = await _store_and_supervise(request, store, take)
    except PayloadError as exc:
        return _refusal(exc)
    partial_success = None
    if report.spans_dropped:
        partial_success = OtlpPartialSuccess(
            rejected_spans=str(report.spans_dropped),
            error_message=f"{report.spans_dropped} of {report.spans} span(s) carry no GenAI or "
            "OpenInference data and were not stored (they are not an error)",
        )
    if kind == PROTOBUF:
        return Response(
            encode_response(signal, report.spans_dropped, partial_success), media_type=PROTOBUF
        )
    answer = OtlpExportResponse(partial_success=partial_success)
    return JSONResponse(answer.model_dump(by_alias=True, exclude_none=True))


def _json_document(body: bytes) -> Any:
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise HTTPException(
            400, f"the body is not valid JSON ({exc}); send an OTLP/JSON export request"
        ) from None
    if not isinstance(document, dict):
        raise HTTPException(400, "the body must be a JSON object (an OTLP export request)")
    return document


@otlp_router.post(
    "/traces",
    response_model=OtlpExportResponse,
    response_model_exclude_none=True,
    responses=_REFUSALS,
    openapi_extra=_OTLP_BODY,
)
async def post_traces(
    request: Request,
    store: StoreDep,
    x_proctor_project: ProjectHeader = None,
) -> Response:
    """OTLP/HTTP trace export: GenAI and OpenInference spans become conversations.

    Spans of one trace (or one ``gen_ai.conversation.id``) sent in several exports end up
    in one conversation. Spans without GenAI data are dropped and counted in
    ``partialSuccess``; a span that cannot be decoded refuses the whole export (400).
    The ``X-Proctor-Project`` header (``OTEL_EXPORTER_OTLP_HEADERS``) names the project.
    """
    return await _export(request, store, "traces", x_proctor_project)


@otlp_router.post(
    "/logs",
    response_model=OtlpExportResponse,
    response_model_exclude_none=True,
    responses=_REFUSALS,
    openapi_extra=_OTLP_BODY,
)
async def post_logs(
    request: Request,
    store: StoreDep,
    x_proctor_project: ProjectHeader = None,
) -> Response:
    """OTLP/HTTP log export: GenAI events (message content sent as log events)."""
    return await _export(request, store, "logs", x_proctor_project)
