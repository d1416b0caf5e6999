"""Continue a discussion from a result (UI-5): context preview → editable draft → sink.

``build_context_draft`` turns a result's facts and their sources into a bounded draft a
person can edit; ``write_prompt_file`` hands the (edited) draft to the sink of an
imported conversation: a ready-to-paste prompt file; ``Asker`` asks a question about the
result of the configured model, the facts going as quoted data (``open_asker``). Imports ``graph`` and reads the
store; only the CLI and the API import this package.

Names are imported when first used: the API's discussion routes need only the limits
(``DRAFT_LIMIT``, ``QUESTION_CHARS``) to be built, not the model supervisor behind
``Asker`` (issue 18: ``proctor serve`` starts without it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from proctor._util.lazy import lazy_exports
from proctor.discussion._draft import DRAFT_LIMIT, QUESTION_CHARS

if TYPE_CHECKING:
    from proctor.discussion._ask import (
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

_WHERE = {
    "AskAnswer": "_ask",
    "Asker": "_ask",
    "GivenFact": "_ask",
    "GivenSource": "_ask",
    "ask_schema": "_ask",
    "asking_model": "_ask",
    "check_question": "_ask",
    "open_asker": "_ask",
    "MESSAGE_ROOM": "_draft",
    "CitedSource": "_draft",
    "ContextDraft": "_draft",
    "LeftOut": "_draft",
    "ResultGraphReader": "_draft",
    "build_context_draft": "_draft",
    "check_edited_draft": "_draft",
    "Focus": "_parts",
    "prompts_folder": "_sink",
    "write_prompt_file": "_sink",
}


__getattr__ = lazy_exports(__name__, _WHERE, globals())


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
