"""Suggestions from a published result's changes (SPEC HB-4, HB-5, HB-6).

``make_suggestions`` turns what one result changed — open items, disagreements, well
supported automatic entities (conventions), revised entities — into at most 20 candidates
(``_candidates``), words them with exactly one model call when there are any and a model
is configured (``_phrasing``; rule text otherwise), and saves them by fingerprint. A person
accepts (a paused task, or a confirmed entity and a memory) or ignores them; an ignored
suggestion returns only with new evidence. Failures raise ``SuggestionError`` and never
touch the published result; ``retry_suggestions`` redoes them alone.
"""

from proctor.errors import SuggestionError, SuggestionStateError
from proctor.heartbeat.suggestions._candidates import (
    MAX_CANDIDATES,
    MIN_SOURCES,
    Candidate,
    candidates,
    evidence_key,
    fingerprint,
)
from proctor.heartbeat.suggestions._make import (
    RETRY_FAILED_STATUS,
    SuggestionOutcome,
    accept_suggestion,
    ignore_suggestion,
    make_suggestions,
    retry_result_suggestions,
    retry_suggestions,
)
from proctor.heartbeat.suggestions._phrasing import (
    PHRASING_SYSTEM,
    PROMPT_VERSION,
    Phrased,
    Phrasing,
    open_phrasing,
    phrasing_schema,
)

__all__ = [
    "MAX_CANDIDATES",
    "MIN_SOURCES",
    "PHRASING_SYSTEM",
    "PROMPT_VERSION",
    "RETRY_FAILED_STATUS",
    "Candidate",
    "Phrased",
    "Phrasing",
    "SuggestionError",
    "SuggestionOutcome",
    "SuggestionStateError",
    "accept_suggestion",
    "candidates",
    "evidence_key",
    "fingerprint",
    "ignore_suggestion",
    "make_suggestions",
    "open_phrasing",
    "phrasing_schema",
    "retry_result_suggestions",
    "retry_suggestions",
]
