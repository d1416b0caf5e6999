"""Continue a discussion from a result (UI-5): context preview → editable draft → sink.

``build_context_draft`` turns a result's facts and their sources into a bounded draft a
person can edit; ``write_prompt_file`` hands the (edited) draft to the sink of an
imported conversation: a ready-to-paste prompt file; ``Asker`` asks a question about the
result of the configured model, the facts going as quoted data (``open_asker``). Imports ``graph`` and reads the
store; only the CLI and the API import this package.
"""

from proctor.discussion._ask import (
    QUESTION_CHARS,
    AskAnswer,
    Asker,
    GivenFact,
    GivenSource,
    ask_schema,
    asking_model,
    check_question,
    open_asker,
)
from proctor.discussion._draft import (
    DRAFT_LIMIT,
    MESSAGE_ROOM,
    CitedSource,
    ContextDraft,
    LeftOut,
    ResultGraphReader,
    build_context_draft,
    check_edited_draft,
)
from proctor.discussion._parts import Focus
from proctor.discussion._sink import prompts_folder, write_prompt_file

__all__ = [
    "DRAFT_LIMIT",
    "MESSAGE_ROOM",
    "QUESTION_CHARS",
    "AskAnswer",
    "Asker",
    "CitedSource",
    "ContextDraft",
    "Focus",
    "GivenFact",
    "GivenSource",
    "LeftOut",
    "ResultGraphReader",
    "ask_schema",
    "asking_model",
    "build_context_draft",
    "check_edited_draft",
    "check_question",
    "open_asker",
    "prompts_folder",
    "write_prompt_file",
]
