"""Notifications: a page with the unread count (ETag, so polling costs a 304), mark read,
and a server-sent events stream that announces changes (SPEC SUP-8).

The ETag is the store's notification version with the query: it changes when a
notification is written, read or deleted, or its finding changes. The stream sends one
``notifications`` event with the counts and the newest notification when it opens and
whenever the version changes, a comment every ``KEEPALIVE`` seconds, and ends after
``max_seconds`` (the client reconnects: ``retry`` says when). It needs the same bearer
token as every route, so a browser's ``EventSource`` (which cannot send one) can use it
only on a server without a token; the web UI polls with ``If-None-Match`` instead.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import anyio.to_thread
from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field, model_validator

from proctor.api._base_models import WireModel
from proctor.api._deps import Limit, Offset, ReaderDep, StoreDep
from proctor.findings import Action, Origin, Severity, Status
from proctor.store import Notification, ReadStore

router = APIRouter(prefix="/notifications", tags=["notifications"])

POLL_SECONDS = 1.0
"""How often the stream looks at the store's notification version."""
KEEPALIVE = 15.0
"""Seconds between keep-alive comments on a quiet stream."""


class NotificationItem(WireModel):
    """A notification and what a reader needs of its finding."""

    id: str
    """The notification's id (its finding's key)."""
    created_at: str
    read_at: str | None
    unread: bool
    finding_id: str
    title: str
    severity: Severity
    action: Action
    rule: str
    origin: Origin
    status: Status
    """The finding's status now."""
    conversation_id: str
    conversation_title: str | None
    project: str
    link: str
    """The web UI's address of the finding (its conversation's page)."""


class NotificationList(WireModel):
    """A page of notifications, newest first."""

    limit: int
    offset: int
    total: int
    """How many match the filter, all pages."""
    unread: int
    """How many are unread, whatever the filter."""
    items: list[NotificationItem]


class MarkRead(BaseModel):
    """Which notifications to mark read: ``ids`` (ids, finding ids or unique prefixes), or
    ``all``."""

    ids: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(
        default_factory=list, max_length=1000
    )
    all: bool = False

    @model_validator(mode="after")
    def _one_of(self) -> MarkRead:
        if bool(self.ids) == self.all:
            raise ValueError("give ids (a list of notification ids) or all: true, not both")
        return self


class Marked(WireModel):
    """What marking read changed."""

    marked: list[str]
    """The ids that were unread and are read now."""
    unread: int


def item(notification: Notification) -> NotificationItem:
    """The API shape of a notification."""
    return NotificationItem(
        id=notification.key,
        created_at=notification.created_at.isoformat(),
        read_at=notification.read_at.isoformat() if notification.read_at else None,
        unread=notification.unread,
        finding_id=notification.finding_id,
        title=notification.title,
        severity=notification.severity,
        action=notification.action,
        rule=notification.rule,
        origin=notification.origin,
        status=notification.status,
        conversation_id=notification.conversation_id,
        conversation_title=notification.conversation_title,
        project=notification.project,
        link=f"#/conversations/{_quote(notification.conversation_id)}"
        f"?finding={_quote(notification.finding_id)}",
    )


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


def _etag(store: ReadStore, *parts: object) -> str:
    text = "|".join([store.notifications_version(), *(str(p) for p in parts)])
    return '"' + hashlib.blake2b(text.encode(), digest_size=10).hexdigest() + '"'


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    wanted = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return etag in wanted or "*" in wanted


@router.get("", response_model=NotificationList, responses={304: {"description": "Unchanged."}})
def list_notifications(
    store: ReaderDep,
    response: Response,
    unread: Annotated[bool, Query(description="Only notifications not yet read.")] = False,
    limit: Limit = 20,
    offset: Offset = 0,
    if_none_match: Annotated[str | None, Header()] = None,
) -> Any:
    """Notifications newest first, with the total and the unread count; answers 304 when
    ``If-None-Match`` names the current ETag."""
    etag = _etag(store, unread, limit, offset)
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if _matches(if_none_match, etag):
        return Response(status_code=304, headers=headers)
    page = store.notification_page(unread_only=unread, limit=limit, offset=offset)
    response.headers.update(headers)
    return NotificationList(
        limit=limit,
        offset=offset,
        total=page.total,
        unread=page.unread,
        items=[item(n) for n in page.items],
    )


@router.post("/read")
def mark_read(store: StoreDep, change: MarkRead) -> Marked:
    """Mark notifications read (by id or unique prefix), or all with ``{"all": true}``."""
    keys = None if change.all else [store.resolve_notification_key(ref) for ref in change.ids]
    marked = store.mark_notifications_read(keys)
    return Marked(marked=marked, unread=store.unread_notification_count())


def _event(store: ReadStore) -> str:
    page = store.notification_page(limit=1)
    newest = item(page.items[0]).model_dump() if page.items else None
    data = json.dumps({"total": page.total, "unread": page.unread, "newest": newest})
    return f"event: notifications\ndata: {data}\n\n"


@router.get(
    "/stream",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "Events."}},
)
async def stream(
    request: Request,
    store: ReaderDep,
    max_seconds: Annotated[
        float, Query(gt=0, le=3600, description="End the stream after this many seconds.")
    ] = 300,
) -> StreamingResponse:
    """Server-sent events: a ``notifications`` event now and whenever notifications change."""

    async def events() -> AsyncIterator[str]:
        yield f"retry: {int(POLL_SECONDS * 3000)}\n\n"
        version = await anyio.to_thread.run_sync(store.notifications_version)
        yield await anyio.to_thread.run_sync(_event, store)
        quiet = 0.0
        waited = 0.0
        while waited < max_seconds and not await request.is_disconnected():
            step = min(POLL_SECONDS, max_seconds - waited)  # ends at max_seconds, not after
            await anyio.sleep(step)
            waited += step
            quiet += step
            now = await anyio.to_thread.run_sync(store.notifications_version)
            if now != version:
                version = now
                quiet = 0.0
                yield await anyio.to_thread.run_sync(_event, store)
            elif quiet >= KEEPALIVE:
                quiet = 0.0
                yield ": keep-alive\n\n"

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
