"""The review pipeline: sources → structural and semantic facts → a published story graph.

One entry point for manual and scheduled reviews (:func:`start_review`, SPEC REV-1);
runs can be paused, resumed and cancelled (REV-5) and share one execution slot (REV-6).

Names are imported when first used, and the pipeline imports the extractors, the
assembler and the search index only once a batch is read: a review that finds nothing
new (the usual heartbeat) must not pay for loading them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from proctor._util.lazy import lazy_exports

if TYPE_CHECKING:
    from proctor.review._no_change import no_change_reason
    from proctor.review._pipeline import (
        DEFAULT_BATCH_SIZE,
        ReviewRequest,
        SemanticLayer,
        begin_resume,
        begin_review,
        cancel_review,
        execute_review,
        pause_review,
        resolve_scope,
        resume_review,
        start_review,
    )
    from proctor.review._semantic_step import open_semantic_layer

_WHERE = {
    "no_change_reason": "_no_change",
    "DEFAULT_BATCH_SIZE": "_pipeline",
    "ReviewRequest": "_pipeline",
    "SemanticLayer": "_pipeline",
    "begin_resume": "_pipeline",
    "begin_review": "_pipeline",
    "cancel_review": "_pipeline",
    "execute_review": "_pipeline",
    "pause_review": "_pipeline",
    "resolve_scope": "_pipeline",
    "resume_review": "_pipeline",
    "start_review": "_pipeline",
    "open_semantic_layer": "_semantic_step",
}


__getattr__ = lazy_exports(__name__, _WHERE, globals())


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "ReviewRequest",
    "SemanticLayer",
    "begin_resume",
    "begin_review",
    "cancel_review",
    "execute_review",
    "no_change_reason",
    "open_semantic_layer",
    "pause_review",
    "resolve_scope",
    "resume_review",
    "start_review",
]
