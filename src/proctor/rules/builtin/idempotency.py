"""Rule family: idempotency — the same operation must not run twice (SPEC SUP-4).

``idempotency_conflict`` reads ``[[idempotency]]`` entries of the policy: a tool glob and
the argument names (dot paths) whose values form the operation's key, e.g.
``tool = "send_money"``, ``arguments = ["recipient", "reference"]``. Once a call with a
key has *succeeded*, a later call of the same tool with the same key is the same
operation again:

* same key, same other arguments: a duplicate execution (``warn``, medium);
* same key, different other arguments: a conflict (``warn``, high) — the two calls
  disagree about what the operation is.

Calls missing a key argument have no key and are not compared. Failed calls do not
count as done. The gate denies the second call by default. Nothing is checked without
``[[idempotency]]`` entries.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from proctor.findings import Evidence
from proctor.rules._calls import argument, tool_matches
from proctor.rules._policy import IdempotencyKey, Policy
from proctor.rules._rule import Hit, Rule, RuleContext
from proctor.rules._trace import Event
from proctor.rules.builtin._file_access import succeeded
from proctor.rules.builtin._policy_support import cite_span, origin
from proctor.rules.builtin._spans import shorten
from proctor.transcript import ToolCall

_Key = tuple[int, str, str]
"""(policy entry, tool name, canonical key values)."""


@dataclass(frozen=True, slots=True)
class _Done:
    call: ToolCall
    others: dict[str, Any]
    """The arguments outside the key."""


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _key_of(
    call: ToolCall, index: int, entry: IdempotencyKey
) -> tuple[_Key, dict[str, Any]] | None:
    if not tool_matches(call.name, [entry.tool]):
        return None
    values = {name: argument(call, name) for name in entry.arguments}
    if any(value is None for value in values.values()):
        return None
    return (index, call.name.lower(), _canonical(values)), values


def _others(call: ToolCall, entry: IdempotencyKey) -> dict[str, Any]:
    if not isinstance(call.arguments, dict):
        return {"arguments": call.arguments}
    rest = {k: v for k, v in call.arguments.items() if k not in entry.arguments}
    for name in entry.arguments:
        if "." in name:
            head, tail = name.split(".", 1)
            if isinstance(rest.get(head), dict):
                rest[head] = {k: v for k, v in rest[head].items() if k != tail}
    return rest


def _cite_key(call: ToolCall, entry: IdempotencyKey, values: dict[str, Any]) -> Evidence:
    name = entry.arguments[0]
    return cite_span(call, f"arguments.{name}", _canonical(values[name]).strip('"'))


class IdempotencyConflict(Rule):
    """A call repeating an operation that already succeeded under the same key."""

    id = "idempotency_conflict"
    version = 1
    category = "risk"
    description = (
        "A second call with the idempotency key of a successful call (policy [[idempotency]])."
    )
    gate_mode = "deny"
    observes = frozenset({"call", "result"})

    def active(self, policy: Policy) -> bool:
        return bool(policy.idempotency)

    def start(self, context: RuleContext) -> dict[_Key, _Done]:
        return {}

    def observe(
        self, state: dict[_Key, _Done], event: Event, context: RuleContext
    ) -> Iterable[Hit]:
        call = event.call
        if call is None or not context.policy.idempotency:
            return ()
        if event.kind == "call":
            return self._judge(state, call, context)
        for index, entry in enumerate(context.policy.idempotency):
            keyed = _key_of(call, index, entry)
            if keyed is not None and succeeded(call) and keyed[0] not in state:
                state[keyed[0]] = _Done(call, _others(call, entry))
        return ()

    def before_call(
        self, state: dict[_Key, _Done], call: ToolCall, context: RuleContext
    ) -> Iterable[Hit]:
        return self._judge(state, call, context)

    def _judge(self, state: dict[_Key, _Done], call: ToolCall, context: RuleContext) -> list[Hit]:
        hits: list[Hit] = []
        for index, entry in enumerate(context.policy.idempotency):
            keyed = _key_of(call, index, entry)
            if (
                keyed is None
                or keyed[0] not in state
                or state[keyed[0]].call.source_id == call.source_id
            ):
                continue
            key, values = keyed
            done = state[key]
            others = _others(call, entry)
            earlier = done.others
            differing = sorted(
                name for name in set(others) | set(earlier) if others.get(name) != earlier.get(name)
            )
            same = not differing
            shown = ", ".join(
                f"{name}={shorten(_canonical(value), 40)}" for name, value in values.items()
            )
            setting = f"[[idempotency]] tool = {entry.tool!r} in {origin(context.policy)}"
            if same:
                title = (
                    f"Duplicate execution of {call.name}: same key and arguments as an earlier call"
                )
                what = "repeats it with the same arguments, so the operation would run twice"
            else:
                title = f"Idempotency conflict on {call.name}: same key, different arguments"
                what = f"uses the same key with different {', '.join(differing)}"
            hits.append(
                Hit(
                    title=title,
                    severity="medium" if same else "high",
                    evidence=(_cite_key(call, entry, values), _cite_key(done.call, entry, values)),
                    content=(
                        f"{done.call.name} with {shown} already succeeded; this call {what}. "
                        f"The key is {', '.join(entry.arguments)} ({setting})."
                    ),
                    actual={"key": values, "differs": differing},
                    threshold=list(entry.arguments),
                    trigger=call.source_id,
                )
            )
        return hits


RULES: list[Rule] = [IdempotencyConflict()]
