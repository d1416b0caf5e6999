"""The deterministic structural layer of a review (SPEC REV-13).

Before any model call, what is already structured in the sources becomes graph facts with
exact source references: files read, edited and created; commands and their exit
status; test runs and their outcome; errors; packages installed; URLs fetched; commits;
sub-agent runs; task status changes; relations structure proves (a test command
``tests`` the file it names, a commit ``modifies`` files it is shown to hold); open items
(a test or command whose last run failed); one story line per conversation; and
episodes: each user request with the work it caused and its outcome line, a sub-thread
of its conversation's line (``_episodes.py``).

Identity (REV-3) follows exact locators only — a normalised path, a test command, a
command line, ``name@ecosystem``, a URL, a commit hash, an agent type, a task id — inside
the project, via :func:`proctor.graph.structural_entity_id`. Shell lines are read with
the rules' parser (``proctor.rules.builtin._shell_*``), so both see the same commands.
"""

from proctor.review.structural._episodes import (
    EPISODE_LINE_NAMESPACE,
    WITHOUT_REQUEST,
    Episodes,
    episode_line_id,
    episode_line_key,
    gather_episodes,
    outcome_line,
)
from proctor.review.structural._extract import extract_structural
from proctor.review.structural._open_items import derive_open_items, open_item_key
from proctor.review.structural._requests import (
    REDACTED_REQUEST,
    is_readable,
    is_user_request,
    request_title,
    titled_by_work,
)
from proctor.review.structural._story import (
    STORY_LINE_NAMESPACE,
    activity_summary,
    conversation_story_lines,
    story_line_id,
    story_line_key,
)

__all__ = [
    "EPISODE_LINE_NAMESPACE",
    "REDACTED_REQUEST",
    "STORY_LINE_NAMESPACE",
    "WITHOUT_REQUEST",
    "Episodes",
    "activity_summary",
    "conversation_story_lines",
    "derive_open_items",
    "episode_line_id",
    "episode_line_key",
    "extract_structural",
    "gather_episodes",
    "is_readable",
    "is_user_request",
    "open_item_key",
    "outcome_line",
    "request_title",
    "story_line_id",
    "story_line_key",
    "titled_by_work",
]
