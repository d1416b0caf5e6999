"""A scripted model that answers evaluation records from a table the test controls."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from proctor.models import ModelCaller, PoolLimits, open_caller
from proctor.testing.scripted_model import RecordedRequest, ScriptedModelServer, ScriptedReply

CASE = re.compile(r"case-(\d+)")


@dataclass
class AnswerTable:
    """Replies per case number (``case-N`` in the record), taken in order: answer, then repair."""

    replies: Mapping[int, Sequence[ScriptedReply | dict[str, Any] | str]]
    _left: dict[int, deque[ScriptedReply | dict[str, Any] | str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._left = {case: deque(replies) for case, replies in self.replies.items()}

    def __call__(self, request: RecordedRequest) -> ScriptedReply | dict[str, Any] | str:
        """The next reply for the case the request's record names."""
        found = CASE.search(request.text_of("user"))
        assert found is not None, "every fixture record names its case"
        return self._left[int(found[1])].popleft()


def case_of(request: RecordedRequest) -> int:
    """The case number a request's record names."""
    found = CASE.search(request.text_of("user"))
    assert found is not None
    return int(found[1])


def caller_for(server: ScriptedModelServer, *, concurrency: int = 1) -> ModelCaller:
    """The product's own pooled caller, pointed at the scripted server."""
    return open_caller(server.connection(), limits=PoolLimits(concurrency=concurrency))
