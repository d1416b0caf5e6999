"""The semantic layer's calls (SPEC REV-2, REV-3, REV-9): one leaf per batch, one merge.

Each call is built like the supervisor's: the system message holds every trusted
instruction (``_prompts``) and nothing observed; the user message is only the encoded
data block with a fresh random token. The answer is parsed strictly and checked against
what the call offered (``_check``); a failing answer gets exactly one repair call (the
same data, the rejected answer quoted as data with its errors). If that fails too, or the
model cannot be reached, the batch fails with ``SemanticBatchError`` — a recorded failed
batch, never a silent empty one. A broken setting (``ModelError`` kind ``config``)
propagates, and cancellation always does.

The calls are async, like every model call in Proctor: a synchronous pipeline runs each
one with ``anyio.run(reviewer.leaf, batch, structural, candidates)`` (the pool keeps no
event-loop state between runs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from proctor.errors import ConfigError, ModelError
from proctor.graph import (
    BatchFacts,
    EntityCandidate,
    EventFact,
    ExperienceFact,
    OpenItemFact,
    StoryLineCandidate,
    StoryLineFact,
)
from proctor.models import (
    ChatMessage,
    ModelCaller,
    ModelPool,
    ModelRequest,
    ModelResponse,
    Stage,
    default_connection_name,
    open_caller,
    pool_limits,
    resolve_connection,
    resolve_supervisor_connection,
    store_recorder,
    supervisor_pin,
)
from proctor.review._batch import SourceBatch
from proctor.review._contract import LeafOutput, MergeOutput, leaf_schema, merge_schema
from proctor.review.semantic._check import check_leaf, check_merge, parse
from proctor.review.semantic._map import leaf_facts, merge_facts
from proctor.review.semantic._prompts import LEAF_SYSTEM, MERGE_SYSTEM, PROMPT_VERSION
from proctor.review.semantic._render import leaf_view, merge_view
from proctor.review.semantic._types import (
    BackgroundNote,
    LeafResult,
    MergeResult,
    RenderLimits,
    SemanticBatchError,
)
from proctor.supervisor import REJECTED_CHARS, clip, data_block, new_boundary, rejected_block

if TYPE_CHECKING:
    from proctor.store import ModelSettings

_T = TypeVar("_T")
_Validate = Callable[[ModelResponse], tuple[_T | None, list[str]]]

_Merged = tuple[
    MergeOutput, tuple[StoryLineFact, ...], tuple[ExperienceFact, ...], tuple[OpenItemFact, ...]
]

LEAF_OUTPUT_TOKENS = 4_096
MERGE_OUTPUT_TOKENS = 4_096


@cache
def _leaf_schema() -> dict[str, Any]:
    return leaf_schema()


@cache
def _merge_schema() -> dict[str, Any]:
    return merge_schema()


@dataclass(slots=True)
class _Tally:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    prompt_chars: int = 0


@dataclass(frozen=True, slots=True)
class _Call:
    """Where a call's usage is recorded and how its failure is reported."""

    what: str
    stage: Stage
    max_output_tokens: int
    run_id: str | None
    target_id: str | None
    batch_no: int | None


class SemanticReviewer:
    """Leaf and merge calls through one model caller (one connection, the pool, MOD-4 rules).

    Construct it around any ``ModelCaller`` (tests pass one pointed at the scripted
    server), or with :meth:`open` from the store's model settings.
    """

    def __init__(
        self,
        caller: ModelCaller,
        *,
        model_label: str | None = None,
        limits: RenderLimits | None = None,
        run_id: str | None = None,
        leaf_output_tokens: int = LEAF_OUTPUT_TOKENS,
        merge_output_tokens: int = MERGE_OUTPUT_TOKENS,
    ) -> None:
        self._caller = caller
        connection = caller.connection
        self.model_label = model_label or f"{connection.name}/{connection.model}"
        """Recorded with results: which connection and model judged."""
        self.limits = limits or RenderLimits()
        self.run_id = run_id
        """Recorded with the merge's usage unless ``merge`` is given one (a leaf uses its
        batch's run id)."""
        self._leaf_output_tokens = leaf_output_tokens
        self._merge_output_tokens = merge_output_tokens

    @property
    def prompt_version(self) -> int:
        """The version of the prompts and rendering, recorded with every result."""
        return PROMPT_VERSION

    @classmethod
    def open(
        cls,
        store: ModelSettings,
        connection_name: str | None = None,
        *,
        run_id: str | None = None,
        pool: ModelPool | None = None,
        limits: RenderLimits | None = None,
    ) -> SemanticReviewer:
        """A reviewer on ``connection_name``, or on the supervisor's connection (pinned or default).

        Raises ``ConfigError`` when no connection is configured at all — the pipeline then
        skips the semantic layer. A configured connection that cannot serve (gone, key
        unset …) raises ``ModelError`` kind ``config``, as for the supervisor: never a
        fallback (SPEC MOD-2, MOD-3).
        """
        if (
            connection_name is None
            and supervisor_pin(store) is None
            and default_connection_name(store) is None
        ):
            raise ConfigError(
                "no model connection is configured, so the semantic layer was skipped; add one "
                "with `proctor models add NAME --provider … --default`"
            )
        connection = (
            resolve_connection(store, connection_name)
            if connection_name is not None
            else resolve_supervisor_connection(store)
        )
        limits_now = pool_limits(store)
        caller = open_caller(
            connection, limits=limits_now, recorder=store_recorder(store), pool=pool
        )
        return cls(caller, limits=limits, run_id=run_id)

    async def leaf(
        self,
        batch: SourceBatch,
        structural: BatchFacts,
        candidates: Sequence[EntityCandidate],
        background: Sequence[BackgroundNote | str] = (),
    ) -> LeafResult:
        """One batch's judgement as semantic facts: one call, one repair at most (REV-2, REV-3)."""
        if not batch.sources:
            return LeafResult(BatchFacts(), 0, 0, 0)
        view = leaf_view(batch, structural, candidates, background, self.limits)

        def validate(response: ModelResponse) -> tuple[BatchFacts | None, list[str]]:
            answer, errors = parse(LeafOutput, response.data)
            if answer is None:
                return None, errors
            errors = check_leaf(answer, view.sources, view.known)
            if errors:
                return None, errors
            return leaf_facts(answer, view.sources, view.known), []

        conversations = {source.conversation_id for source in batch.sources}
        call = _Call(
            what=f"batch {batch.batch_no}",
            stage="review",
            max_output_tokens=self._leaf_output_tokens,
            run_id=batch.run_id,
            target_id=next(iter(conversations)) if len(conversations) == 1 else None,
            batch_no=batch.batch_no,
        )
        facts, tally = await self._ask(LEAF_SYSTEM, view.lines, _leaf_schema(), validate, call)
        return LeafResult(
            facts, tally.calls, tally.input_tokens, tally.output_tokens, tally.prompt_chars
        )

    async def merge(
        self,
        leaves: Sequence[BatchFacts],
        events: Sequence[EventFact],
        story_lines: Sequence[StoryLineCandidate],
        scope_label: str,
        *,
        run_id: str | None = None,
    ) -> MergeResult:
        """The review's summary, story lines, experiences and open items (REV-9).

        ``run_id`` (else the reviewer's) is recorded with the call's usage.
        """
        if not events and not any(leaf.summary or leaf.change_digest for leaf in leaves):
            return MergeResult("", "", (), (), (), 0, 0, 0)
        view = merge_view(leaves, events, story_lines, scope_label, self.limits)

        def validate(response: ModelResponse) -> tuple[_Merged | None, list[str]]:
            answer, errors = parse(MergeOutput, response.data)
            if answer is None:
                return None, errors
            errors = check_merge(answer, view.events, view.story_lines)
            if errors:
                return None, errors
            return (answer, *merge_facts(answer, view.events, view.story_lines)), []

        call = _Call(
            what="the merge",
            stage="merge",
            max_output_tokens=self._merge_output_tokens,
            run_id=run_id or self.run_id,
            target_id=None,
            batch_no=None,
        )
        mapped, tally = await self._ask(MERGE_SYSTEM, view.lines, _merge_schema(), validate, call)
        answer, lines, experiences, open_items = mapped
        return MergeResult(
            summary=answer.summary,
            change_digest=answer.change_digest,
            story_lines=lines,
            experiences=experiences,
            open_items=open_items,
            calls=tally.calls,
            input_tokens=tally.input_tokens,
            output_tokens=tally.output_tokens,
            prompt_chars=tally.prompt_chars,
        )

    async def _ask(
        self,
        system: str,
        lines: Sequence[str],
        schema: dict[str, Any],
        validate: _Validate[_T],
        call: _Call,
    ) -> tuple[_T, _Tally]:
        """Ask, validate, repair once; the value or ``SemanticBatchError``."""
        tally = _Tally()
        user = data_block(lines, new_boundary())
        tally.prompt_chars = len(system) + len(user)
        request = ModelRequest(
            messages=(ChatMessage("system", system), ChatMessage("user", user)),
            json_schema=schema,
            schema_name="answer",
            stage=call.stage,
            max_output_tokens=call.max_output_tokens,
            target_id=call.target_id,
            run_id=call.run_id,
        )
        response = await self._complete(request, tally, call)
        value, errors = validate(response)
        if value is not None:
            return value, tally

        token = new_boundary()
        rejected = clip(response.text, REJECTED_CHARS)[0]
        repair = "\n".join([data_block(lines, token), rejected_block(rejected, errors, token)])
        repair_request = replace(
            request,
            messages=(ChatMessage("system", system), ChatMessage("user", repair)),
            stage="repair",
        )
        response = await self._complete(repair_request, tally, call)
        value, errors = validate(response)
        if value is not None:
            return value, tally
        raise SemanticBatchError(
            f"{call.what} gave no valid answer after one repair: " + "; ".join(errors[:5]),
            batch_no=call.batch_no,
            reason="invalid_answer",
            errors=errors,
            calls=tally.calls,
            input_tokens=tally.input_tokens,
            output_tokens=tally.output_tokens,
        )

    async def _complete(self, request: ModelRequest, tally: _Tally, call: _Call) -> ModelResponse:
        tally.calls += 1
        try:
            response = await self._caller.complete(request)
        except ModelError as error:
            if error.kind == "config":
                raise
            raise SemanticBatchError(
                f"{call.what} could not be reviewed: {error.kind}: {error}",
                batch_no=call.batch_no,
                reason="model_error",
                errors=(f"{error.kind}: {error}",),
                calls=tally.calls,
                input_tokens=tally.input_tokens,
                output_tokens=tally.output_tokens,
            ) from error
        tally.input_tokens += response.input_tokens
        tally.output_tokens += response.output_tokens
        return response
