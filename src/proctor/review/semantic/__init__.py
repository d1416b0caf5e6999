"""The review's semantic layer (SPEC REV-2, REV-3, REV-7b, REV-9): judgement by a model.

``SemanticReviewer.leaf`` reads one batch — its sources, the structural facts already
extracted from them (REV-13, given as context), the known entities as candidate refs
(REV-3) and a little background (REV-7b) — and returns the batch's semantic facts:
decisions, rationale, concepts, disagreements, the stage summary. ``merge`` combines the
leaves into the result's summary, story lines and experiences (REV-9). Every answer is
strict JSON, checked against what the call offered and repaired once at most; identity
is Proctor's (candidate refs map to UUIDs, names never decide it).
"""

from proctor.review.semantic._map import MERGE_KEY_PREFIX, SEMANTIC_NAMESPACE
from proctor.review.semantic._prompts import LEAF_SYSTEM, MERGE_SYSTEM, PROMPT_VERSION
from proctor.review.semantic._render import KnownEntity, LeafView, MergeView, leaf_view, merge_view
from proctor.review.semantic._reviewer import (
    LEAF_OUTPUT_TOKENS,
    MERGE_OUTPUT_TOKENS,
    SemanticReviewer,
)
from proctor.review.semantic._types import (
    BACKGROUND_CHARS,
    MAX_BACKGROUND,
    BackgroundNote,
    LeafResult,
    MergeResult,
    RenderLimits,
    SemanticBatchError,
)

__all__ = [
    "BACKGROUND_CHARS",
    "LEAF_OUTPUT_TOKENS",
    "LEAF_SYSTEM",
    "MAX_BACKGROUND",
    "MERGE_KEY_PREFIX",
    "MERGE_OUTPUT_TOKENS",
    "MERGE_SYSTEM",
    "PROMPT_VERSION",
    "SEMANTIC_NAMESPACE",
    "BackgroundNote",
    "KnownEntity",
    "LeafResult",
    "LeafView",
    "MergeResult",
    "MergeView",
    "RenderLimits",
    "SemanticBatchError",
    "SemanticReviewer",
    "leaf_view",
    "merge_view",
]
