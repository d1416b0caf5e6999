"""Continue a discussion (UI-5): a context draft built from a result, then handed on.

Without ``draft`` the call is a preview: the draft Proctor built, for the person to edit.
With ``draft`` (the edited text) the draft is handed to the conversation's sink: for an
imported conversation, a ready-to-paste prompt file under ``$PROCTOR_HOME/prompts``.
Proctor cannot type into another program's session; the person pastes the file (or
copies the draft). Where a model connection is configured, ``POST …/ask`` asks a question
about the result directly and answers with the quoted facts the model was given.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, HTTPException, Path
from pydantic import BaseModel, ConfigDict, Field

from proctor.api._base_models import WireModel
from proctor.api._deps import StoreDep
from proctor.discussion import DRAFT_LIMIT, QUESTION_CHARS
from proctor.errors import ModelError

if TYPE_CHECKING:
    from proctor.discussion import AskAnswer, ContextDraft

router = APIRouter(tags=["discussion"])

_Ref = Field(default=None, min_length=1, max_length=200)


class DiscussionFocus(BaseModel):
    """What to continue about: at most one of these (none: the whole result)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    story_line: str | None = _Ref
    """A story line of the result (id or unique prefix)."""
    entity: str | None = _Ref
    """An entity of the result (id or unique prefix)."""
    open_item: str | None = Field(default=None, min_length=1, max_length=500)
    """An open item of the result (its key or a unique prefix)."""


class ContinueRequest(BaseModel):
    """Preview a draft, or hand an edited one on."""

    model_config = ConfigDict(extra="forbid")

    focus: DiscussionFocus = Field(default_factory=DiscussionFocus)
    """What to continue about."""
    draft: str | None = Field(default=None, max_length=4 * DRAFT_LIMIT)
    """The person's edited draft (at most 12,000 characters once trimmed of surrounding
    whitespace): when given it is written as a prompt file; when absent, only a preview."""


class CitedSourceModel(WireModel):
    """A source the draft cites."""

    label: str
    """How the draft cites it: ``S1``, ``S2`` …"""
    source_type: str
    """``message``, ``tool_call``, ``task_event`` …"""
    source_id: str
    """The stored source's id."""
    title: str
    """What the source is (``tool Bash (ok)`` …)."""
    occurred_at: datetime | None
    """When it happened."""
    conversation_id: str | None
    """The conversation it belongs to."""
    exists: bool
    """False once the source was deleted."""


class LeftOutModel(WireModel):
    """How much of one kind of fact the draft does not show."""

    part: str
    """``events``, ``entities``, ``sources`` …"""
    left_out: int
    """How many are not shown."""
    total: int
    """How many the result holds."""


class ContinueResponse(WireModel):
    """The draft, what it cites and leaves out, and where it was handed on."""

    result_id: str
    """The result the draft was built from."""
    focus: str
    """``the whole result``, ``story line …``, ``entity …`` or ``open item …``."""
    draft: str
    """The draft: Proctor's (a preview) or the person's (handed on)."""
    chars: int
    """Its length in characters (at most 12,000)."""
    trimmed: bool
    """Proctor left parts of the result out to stay within the limit."""
    left_out: list[LeftOutModel]
    """What was left out, by kind."""
    sources: list[CitedSourceModel]
    """The sources Proctor's draft cites."""
    prompt_file: str | None
    """Where the handed-on draft was written (None for a preview)."""
    ask_model: str | None = None
    """``connection/model`` a question can be asked of directly (``POST …/ask``); None
    when no model connection is configured."""


def _response(built: ContextDraft, text: str, prompt_file: str | None) -> ContinueResponse:
    return ContinueResponse(
        result_id=built.result_id,
        focus=built.focus.label,
        draft=text,
        chars=len(text),
        trimmed=built.trimmed,
        left_out=[LeftOutModel(**asdict(x)) for x in built.left_out],
        sources=[CitedSourceModel(**asdict(s)) for s in built.sources],
        prompt_file=prompt_file,
    )


@router.post("/results/{result_ref}/continue")
def continue_discussion(
    store: StoreDep,
    result_ref: Annotated[str, Path(min_length=1, max_length=200)],
    request: ContinueRequest,
) -> ContinueResponse:
    """Preview the context draft for a result, or hand the edited draft to the sink."""
    from proctor.discussion import (
        Focus,
        asking_model,
        build_context_draft,
        check_edited_draft,
        write_prompt_file,
    )

    focus = Focus(
        story_line_id=request.focus.story_line,
        entity_id=request.focus.entity,
        open_item_key=request.focus.open_item,
    )
    built = build_context_draft(store, result_ref, focus)
    if request.draft is None:
        return _response(built, built.text, None).model_copy(
            update={"ask_model": asking_model(store)}
        )
    text = check_edited_draft(request.draft)
    path = write_prompt_file(text, built.result_id)
    return _response(built, text, str(path))


class AskRequest(BaseModel):
    """A question about a result, asked of the configured model."""

    model_config = ConfigDict(extra="forbid")

    focus: DiscussionFocus = Field(default_factory=DiscussionFocus)
    """What the question is about (none: the whole result)."""
    question: str = Field(min_length=1, max_length=4 * QUESTION_CHARS)
    """The person's question (at most 2,000 characters once trimmed)."""


class GivenFactModel(WireModel):
    """A fact the model was given, as quoted to it."""

    ref: str
    """``F1``, ``F2`` …"""
    section: str
    text: str
    sources: list[str]
    """The refs (``S1`` …) of the sources it cites."""


class GivenSourceModel(WireModel):
    """A source the model was given, as quoted to it."""

    ref: str
    source_type: str
    source_id: str
    title: str
    excerpt: str
    occurred_at: datetime | None
    conversation_id: str | None
    exists: bool


class AskResponse(WireModel):
    """The model's answer with the quoted facts and sources it was given."""

    result_id: str
    focus: str
    question: str
    answer: str
    cited: list[str]
    """Refs of the facts and sources the answer rests on."""
    facts: list[GivenFactModel]
    sources: list[GivenSourceModel]
    left_out: int
    """Facts of the result not given to the model, to stay within the budget."""
    model: str
    calls: int
    input_tokens: int
    output_tokens: int


def _asked(answer: AskAnswer) -> AskResponse:
    return AskResponse(
        result_id=answer.result_id,
        focus=answer.focus.label,
        question=answer.question,
        answer=answer.answer,
        cited=list(answer.cited),
        facts=[GivenFactModel(**asdict(f) | {"sources": list(f.sources)}) for f in answer.facts],
        sources=[GivenSourceModel(**asdict(s)) for s in answer.sources],
        left_out=answer.left_out,
        model=answer.model,
        calls=answer.calls,
        input_tokens=answer.input_tokens,
        output_tokens=answer.output_tokens,
    )


@router.post("/results/{result_ref}/ask")
def ask_about_result(
    store: StoreDep,
    result_ref: Annotated[str, Path(min_length=1, max_length=200)],
    request: AskRequest,
) -> AskResponse:
    """Ask the configured model a question about a result: its facts and sources go to the
    model as quoted data; the answer comes back with exactly what it was given."""
    from proctor.discussion import Focus, open_asker

    asker = open_asker(store)
    if asker is None:
        raise HTTPException(
            409,
            "no model connection is configured: add one in Settings (or `proctor models add`), "
            "or save the draft as a prompt file instead",
        )
    focus = Focus(
        story_line_id=request.focus.story_line,
        entity_id=request.focus.entity,
        open_item_key=request.focus.open_item,
    )
    try:
        answer = asyncio.run(asker.ask(store, result_ref, focus, request.question))
    except ModelError as error:
        raise HTTPException(502, f"the model call failed ({error.kind}): {error}") from error
    return _asked(answer)
