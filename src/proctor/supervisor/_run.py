"""One supervision call (SPEC SUP-6): window in, validated findings or "unavailable" out.

The request holds two messages: the mode's system prompt (every trusted instruction) and
a user message that is nothing but the observed data block, framed with a fresh random
token. The answer is validated against ``SupervisorAnswer``; an answer that is not one
JSON object, or does not validate, gets exactly one repair call (the same system prompt,
the same data, and the rejected answer quoted as data with its errors). If that fails
too, or the model cannot be reached, the outcome is ``unavailable`` with the reason —
never an empty pass. A broken setting (``ModelError`` kind ``config``) is not an outage:
it propagates so the run fails loudly (SPEC MOD-2). Cancellation propagates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import ValidationError

from proctor.errors import ModelError
from proctor.findings import Finding
from proctor.model_types import ChatMessage, ModelCaller, ModelRequest, ModelResponse, Stage
from proctor.supervisor._block import data_block, new_boundary, rejected_block
from proctor.supervisor._decision import Decision, Mode, SupervisorAnswer, answer_schema
from proctor.supervisor._findings import findings_from
from proctor.supervisor._items import clip
from proctor.supervisor._window_types import Window
from proctor.supervisor.prompts import PROMPTS, Prompt

_MAX_ERRORS = 20
REJECTED_CHARS = 8_000
"""How much of a rejected answer the repair call quotes back."""


@dataclass(frozen=True, slots=True)
class SupervisionOutcome:
    """What one supervision of one window produced, and what it cost."""

    status: Literal["ok", "unavailable"]
    findings: tuple[Finding, ...]
    decisions: tuple[Decision, ...]
    """The model's validated decisions, before evidence re-validation."""
    error: str | None
    """Why supervision was unavailable."""
    prompt_version: int
    input_tokens: int
    """As the provider reported them, over every call that returned (0 when unknown)."""
    output_tokens: int
    calls: int
    """Model calls made, the repair call included."""
    window_chars: int


@dataclass(slots=True)
class _Tally:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, response: ModelResponse) -> None:
        self.input_tokens += response.input_tokens
        self.output_tokens += response.output_tokens


async def supervise(
    caller: ModelCaller, window: Window, mode: Mode, *, run_id: str | None = None
) -> SupervisionOutcome:
    """Ask the model about ``window`` in ``mode``; validate, repair once, or report unavailable."""
    prompt = PROMPTS[mode]
    tally = _Tally()

    def outcome(
        status: Literal["ok", "unavailable"],
        *,
        decisions: Sequence[Decision] = (),
        error: str | None = None,
    ) -> SupervisionOutcome:
        findings = findings_from(decisions, window, mode, prompt.version) if status == "ok" else ()
        return SupervisionOutcome(
            status=status,
            findings=findings,
            decisions=tuple(decisions),
            error=error,
            prompt_version=prompt.version,
            input_tokens=tally.input_tokens,
            output_tokens=tally.output_tokens,
            calls=tally.calls,
            window_chars=window.chars,
        )

    token = new_boundary()
    request = _request(prompt, data_block(window.lines, token), "supervise", window, run_id)
    try:
        response = await _call(caller, request, tally)
    except ModelError as error:
        if error.kind == "config":
            raise
        return outcome("unavailable", error=f"{error.kind}: {error}")
    answer, errors = validate_answer(response)
    if answer is not None:
        return outcome("ok", decisions=answer.decisions)

    token = new_boundary()
    rejected = clip(response.text, REJECTED_CHARS)[0]
    repair = "\n".join([data_block(window.lines, token), rejected_block(rejected, errors, token)])
    try:
        response = await _call(caller, _request(prompt, repair, "repair", window, run_id), tally)
    except ModelError as error:
        if error.kind == "config":
            raise
        return outcome("unavailable", error=f"repair failed: {error.kind}: {error}")
    answer, errors = validate_answer(response)
    if answer is None:
        return outcome("unavailable", error="invalid answer after one repair: " + "; ".join(errors))
    return outcome("ok", decisions=answer.decisions)


def validate_answer(response: ModelResponse) -> tuple[SupervisorAnswer | None, list[str]]:
    """The validated answer, or None and what is wrong with it (never quoting its values)."""
    if response.data is None:
        return None, ["the answer is not one JSON object"]
    try:
        return SupervisorAnswer.model_validate(response.data), []
    except ValidationError as invalid:
        errors = [
            f"{'.'.join(str(part) for part in error['loc']) or 'answer'}: {error['msg']}"
            for error in invalid.errors(include_input=False, include_url=False)
        ]
        return None, errors[:_MAX_ERRORS]


async def _call(caller: ModelCaller, request: ModelRequest, tally: _Tally) -> ModelResponse:
    tally.calls += 1
    response = await caller.complete(request)
    tally.add(response)
    return response


def _request(
    prompt: Prompt, user: str, stage: Stage, window: Window, run_id: str | None
) -> ModelRequest:
    return ModelRequest(
        messages=(ChatMessage("system", prompt.system), ChatMessage("user", user)),
        json_schema=answer_schema(),
        stage=stage,
        target_id=window.target_id,
        run_id=run_id,
    )
