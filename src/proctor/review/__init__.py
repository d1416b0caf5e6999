"""The review pipeline: sources → structural and semantic facts → a published story graph.

One entry point for manual and scheduled reviews (:func:`start_review`, SPEC REV-1);
runs can be paused, resumed and cancelled (REV-5) and share one execution slot (REV-6).
"""

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
