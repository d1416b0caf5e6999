"""Sources: the full text of one source and the context around it (REV-12).

A source id may contain ``/`` and ``:``; it is the rest of the path after the type.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from proctor.api._deps import ReaderDep
from proctor.graph.views import SourceContext, SourceText
from proctor.transcript import SourceType

router = APIRouter(tags=["sources"])

SourceId = Annotated[
    str, Path(min_length=1, max_length=2_000, description="The source's id (may contain /).")
]
Around = Annotated[int, Query(ge=0, le=20, description="How many neighbours (0–20).")]


@router.get("/sources/{source_type}/{source_id:path}")
def source(store: ReaderDep, source_type: SourceType, source_id: SourceId) -> SourceText:
    """The full text of one message, tool call (arguments and result) or task event."""
    return store.source_text(source_type, source_id)


@router.get("/source-context/{source_type}/{source_id:path}")
def source_context(
    store: ReaderDep,
    source_type: SourceType,
    source_id: SourceId,
    before: Around = 3,
    after: Around = 3,
) -> SourceContext:
    """A source with its neighbours in the conversation, in reading order."""
    return store.source_context(source_type, source_id, before, after)
