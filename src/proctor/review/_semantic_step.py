"""Choosing the semantic layer for a review: a configured model connection, or none.

Without a connection the review still runs: it publishes the structural graph and its
coverage says why the semantic layer was skipped (REV-13). A connection that is set but
broken (missing key, unknown name) fails the run instead: a setting to fix is not a
reason to silently skip judgement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

from proctor.errors import ConfigError
from proctor.review._pipeline import SemanticLayer

if TYPE_CHECKING:
    from proctor.graph import BatchFacts, ResultDraft
    from proctor.review._batch import SourceBatch
    from proctor.review.semantic import BackgroundNote, SemanticReviewer
    from proctor.store import Store

# The semantic reviewer (prompts, the supervisor's data block, the rules' shell parser)
# is imported only when a connection is configured: a structural or no-change review
# never loads it.

NO_CONNECTION = "no model connection is configured (`proctor models add NAME … --default`)"
TURNED_OFF = "turned off for this run (--no-model)"


def open_semantic_layer(
    store: Store, connection: str | None, *, use_model: bool = True, cross_project: bool = False
) -> tuple[SemanticLayer | None, str | None]:
    """The semantic layer to use and, when there is none, why it is skipped."""
    if not use_model:
        return None, TURNED_OFF
    from proctor.models import default_connection_name, supervisor_pin

    if (
        connection is None
        and supervisor_pin(store) is None
        and default_connection_name(store) is None
    ):
        return None, NO_CONNECTION
    from proctor.review.semantic import SemanticReviewer

    try:
        reviewer = SemanticReviewer.open(store, connection)
    except ConfigError:
        return None, NO_CONNECTION
    return ModelLayer(reviewer, cross_project=cross_project), None


@dataclass(slots=True)
class ModelLayer:
    """The pipeline's semantic step on a :class:`SemanticReviewer` (one per run)."""

    reviewer: SemanticReviewer
    cross_project: bool = False
    candidate_limit: int = 100
    story_line_limit: int = 40

    @property
    def model_label(self) -> str:
        """``connection/model``, recorded on the run."""
        return self.reviewer.model_label

    def leaf(
        self, batch: SourceBatch, structural: BatchFacts, store: Store
    ) -> tuple[BatchFacts, int, int, int]:
        """One leaf call: the known entities of the batch's project are the candidates."""
        projects = {s.project_id for s in batch.sources}
        project_id = next(iter(projects)) if len(projects) == 1 else None
        candidates = store.entity_candidates(
            project_id, limit=self.candidate_limit, cross_project=self.cross_project
        )
        background = _background(store, batch.scope_key, project_id)
        import anyio

        result = anyio.run(partial(self.reviewer.leaf, batch, structural, candidates, background))
        return result.facts, result.calls, result.input_tokens, result.output_tokens

    def merge(
        self, draft: ResultDraft, batches: Sequence[BatchFacts], store: Store
    ) -> tuple[ResultDraft, int, int, int]:
        """The navigation merge: summaries, story lines, experiences, open items."""
        story_lines = store.story_line_candidates(draft.project_id, limit=self.story_line_limit)
        import anyio

        result = anyio.run(
            partial(
                self.reviewer.merge,
                batches,
                draft.events,
                story_lines,
                draft.scope_key,
                run_id=draft.run_id,
            )
        )
        merged = replace(
            draft,
            summary=result.summary or draft.summary,
            change_digest=result.change_digest or draft.change_digest,
            story_lines=(*draft.story_lines, *result.story_lines),
            experiences=(*draft.experiences, *result.experiences),
            open_items=(*draft.open_items, *result.open_items),
        )
        return merged, result.calls, result.input_tokens, result.output_tokens


def _background(store: Store, scope_key: str, project_id: str | None) -> list[BackgroundNote]:
    """REV-7b: the scope's latest summary, what a person chose to remember (accepted
    conventions) and the entities they confirmed, with their real times. Background never
    triggers a call and can never be cited as evidence."""
    from proctor.review.semantic import MAX_BACKGROUND, BackgroundNote

    notes: list[BackgroundNote] = []
    latest = store.latest_result(scope_key)
    if latest is not None and latest.summary:
        notes.append(BackgroundNote(f"Last review: {latest.summary}", latest.created_at))
    if project_id is not None:
        for memory in store.memories(project=project_id, limit=MAX_BACKGROUND - len(notes)):
            notes.append(BackgroundNote(f"Remembered: {memory.text}", memory.updated_at))
    for entity in store.entity_candidates(
        project_id, limit=MAX_BACKGROUND - len(notes), states=("confirmed", "revised")
    ):
        text = f"Confirmed {entity.kind} {entity.name}: {entity.description}"
        notes.append(BackgroundNote(text, entity.updated_at))
    return notes[:MAX_BACKGROUND]
