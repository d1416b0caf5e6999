"""The real ModelCaller pointed at the scripted server, and answers to script."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from proctor.models import ModelCaller, PoolLimits, UsageRecorder, open_caller
from proctor.testing.scripted_model import RecordedRequest, ScriptedModelServer


def caller_for(
    server: ScriptedModelServer, *, provider: str = "openai", recorder: UsageRecorder | None = None
) -> ModelCaller:
    """The production caller (pool, timeout, retry rules) against the scripted server."""
    return open_caller(server.connection(provider=provider), limits=PoolLimits(), recorder=recorder)


def decision(evidence: Sequence[str], **changes: Any) -> dict[str, Any]:
    """One SUP-6 decision as a model would write it."""
    value: dict[str, Any] = {
        "action": "warn",
        "category": "evidence_gap",
        "severity": "high",
        "title": "Claims all tests pass after a failing test run",
        "content": "The agent says the tests pass but the last run failed.",
        "evidence": list(evidence),
        "confidence": 0.9,
        "suggested_actions": ["Run the tests again"],
    }
    value.update(changes)
    return value


def answer(*decisions: dict[str, Any]) -> dict[str, Any]:
    """A whole answer."""
    return {"decisions": list(decisions)}


def data_entries(request: RecordedRequest) -> list[dict[str, Any]]:
    """The JSON lines of the observed-data block a request carried."""
    user = request.text_of("user")
    token = user.splitlines()[0].removeprefix("<<<OBSERVED-DATA ").removesuffix(">>>")
    block = user.split(f"<<<END OBSERVED-DATA {token}>>>")[0]
    return [json.loads(line) for line in block.splitlines()[1:]]
