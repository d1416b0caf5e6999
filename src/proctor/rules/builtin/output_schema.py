"""Rule family: output schemas — outputs must have the shape the project expects (SPEC SUP-4).

``output_schema_mismatch`` reads ``[[output_schemas]]`` of the policy. Each has a
``target`` and a JSON Schema, validated with ``jsonschema`` (the draft named by the
schema's ``$schema``, 2020-12 when absent; ``format`` is checked):

* ``final_message``: the last assistant reply, parsed as JSON — the whole reply, or a
  fenced ```` ```json ```` block in it (an unlabelled fence is tried last). Checked at
  the end of the run; a reply that is not JSON, or no reply at all, is a mismatch too.
* ``tool:<glob>``: the arguments of every call of a matching tool, checked as the call
  is made; the gate denies a call whose arguments do not match.

A finding names the failing field path (``items.0.price``), the validator's message and
how many other problems there are. Severity medium, category quality.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from proctor.findings import Evidence
from proctor.rules._calls import tool_matches
from proctor.rules._evidence import cite_absence, cite_message
from proctor.rules._policy import OutputSchema, Policy
from proctor.rules._rule import Hit, Rule, RuleContext
from proctor.rules._trace import Event
from proctor.rules.builtin._policy_support import cite_span, origin
from proctor.rules.builtin._spans import shorten
from proctor.transcript import Message, ToolCall

if TYPE_CHECKING:  # jsonschema is imported only for a policy with output schemas
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n(.*?)```", re.DOTALL)
_LISTED = 5


@dataclass(frozen=True, slots=True)
class _Check:
    label: str
    target: str
    validator: Validator


@dataclass(slots=True)
class _State:
    checks: list[_Check]
    last_reply: Message | None = None


def _path(error: ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path)


def _parse(text: str) -> tuple[Any, int, int] | None:
    """The JSON value in a reply and where it is: the whole text, else a fenced block."""
    stripped = text.strip()
    try:
        start = len(text) - len(text.lstrip())
        return json.loads(stripped), start, start + len(stripped)
    except ValueError:
        pass
    fences = sorted(_FENCE.finditer(text), key=lambda m: m.group(1).lower() != "json")
    for match in fences:
        if match.group(1).lower() not in ("json", "jsonc", ""):
            continue
        body = match.group(2)
        start = match.start(2) + len(body) - len(body.lstrip())
        try:
            return json.loads(body), start, start + len(body.strip())
        except ValueError:
            continue
    return None


def _errors(check: _Check, instance: Any) -> list[ValidationError]:
    return sorted(check.validator.iter_errors(instance), key=lambda e: (_path(e), e.message))


def _check(index: int, schema: OutputSchema) -> _Check:
    # Imported here, not at the top: the gate hook is a fresh process per tool call, and
    # most policies have no output schemas.
    from jsonschema import Draft202012Validator, validators

    document = schema.json_schema
    cls = validators.validator_for(document, default=Draft202012Validator)
    title = document.get("title")
    label = repr(title) if isinstance(title, str) else f"output_schemas[{index}]"
    return _Check(label, schema.target, cls(document, format_checker=cls.FORMAT_CHECKER))


def _best(errors: list[ValidationError]) -> ValidationError:
    """The error most worth showing (``jsonschema``'s choice)."""
    from jsonschema.exceptions import best_match

    best: ValidationError | None = best_match(errors)
    assert best is not None
    return best


def _summary(
    errors: list[ValidationError], check: _Check, context: RuleContext
) -> tuple[str, list[dict[str, str]]]:
    best = _best(errors)
    others = [e for e in errors if e is not best]
    listed = "; ".join(
        f"{_path(e) or '(top level)'}: {shorten(e.message, 80)}" for e in others[:_LISTED]
    )
    more = f" {len(others)} more: {listed}." if others else ""
    content = (
        f"{_path(best) or '(top level)'}: {shorten(best.message, 160)}.{more} The schema is "
        f"{check.label} (output_schemas target {check.target!r} in {origin(context.policy)})."
    )
    actual = [{"path": _path(e), "message": e.message} for e in [best, *others][:10]]
    return content, actual


class OutputSchemaMismatch(Rule):
    """An output that does not satisfy the policy's JSON Schema."""

    id = "output_schema_mismatch"
    version = 1
    category = "quality"
    description = "The final reply or a tool call's arguments fail a policy output schema."
    gate_mode = "deny"
    observes = frozenset({"message", "call"})

    def active(self, policy: Policy) -> bool:
        return bool(policy.output_schemas)

    def start(self, context: RuleContext) -> _State:
        return _State([_check(i, s) for i, s in enumerate(context.policy.output_schemas)])

    def observe(self, state: _State, event: Event, context: RuleContext) -> Iterable[Hit]:
        message = event.message
        if (
            message is not None
            and message.role == "assistant"
            and message.kind == "reply"
            and message.text.strip()
        ):
            state.last_reply = message
        if event.kind == "call" and event.call is not None:
            return self._judge_call(state, event.call, context)
        return ()

    def before_call(self, state: _State, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        return self._judge_call(state, call, context)

    def _judge_call(self, state: _State, call: ToolCall, context: RuleContext) -> list[Hit]:
        hits = []
        for check in state.checks:
            if check.target == "final_message" or not tool_matches(call.name, [check.target[5:]]):
                continue
            instance = call.arguments
            if isinstance(instance, str):
                with contextlib.suppress(ValueError):
                    instance = json.loads(instance)
            errors = _errors(check, instance)
            if not errors:
                continue
            best = _best(errors)
            where = _path(best)
            content, actual = _summary(errors, check, context)
            failing = json.dumps(best.instance, ensure_ascii=False, default=str)
            hits.append(
                Hit(
                    title=f"{call.name} arguments fail output schema {check.label} at {where or '(top level)'}",
                    severity="medium",
                    evidence=(
                        cite_span(call, "arguments" + (f".{where}" if where else ""), failing),
                    ),
                    content=content,
                    actual=actual,
                    threshold=check.target,
                    trigger=call.source_id,
                )
            )
        return hits

    def finish(self, state: _State, context: RuleContext) -> Iterable[Hit]:
        if context.trace.kind != "main":
            return []  # a sub-agent's run is part of its parent's; the parent is judged
        hits = []
        reply = state.last_reply
        for check in state.checks:
            if check.target != "final_message":
                continue
            setting = (
                f"{check.label} (output_schemas target 'final_message' in {origin(context.policy)})"
            )
            if reply is None:
                missing = f"a final reply matching output schema {check.label}"
                hits.append(self._hit(
                    f"No final reply to check against output schema {check.label}",
                    cite_absence(context.trace.conversation_id, missing),
                    f"The run ended without an assistant reply; {setting} expects one.",
                    None, check, None,
                ))  # fmt: skip
                continue
            parsed = _parse(reply.text)
            if parsed is None:
                hits.append(self._hit(
                    f"Final reply is not JSON (output schema {check.label})",
                    cite_message(reply),
                    f"The last reply is neither JSON nor holds a fenced ```json block; {setting}.",
                    "not JSON", check, reply.source_id,
                ))  # fmt: skip
                continue
            value, start, end = parsed
            errors = _errors(check, value)
            if errors:
                best = _best(errors)
                content, actual = _summary(errors, check, context)
                hits.append(self._hit(
                    f"Final reply fails output schema {check.label} at {_path(best) or '(top level)'}",
                    cite_message(reply, start, end), content, actual, check, reply.source_id,
                ))  # fmt: skip
        return hits

    @staticmethod
    def _hit(
        title: str,
        evidence: Evidence,
        content: str,
        actual: Any,
        check: _Check,
        trigger: str | None,
    ) -> Hit:
        return Hit(
            title=title,
            severity="medium",
            evidence=(evidence,),
            content=content,
            actual=actual,
            threshold=check.target,
            trigger=trigger,
        )


RULES: list[Rule] = [OutputSchemaMismatch()]
