"""Rule family: hard stops and required artifacts — what must never and what must happen.

* ``hard_stop`` reads ``[[hard_stops]]``: a tool glob, an optional argument (dot path)
  and a regular expression. A call of a matching tool whose argument (or, without
  ``argument``, any string argument or the shell command it runs) matches is a ``stop``
  finding, high, with the matched text cited; the gate denies such a call.
* ``missing_required_artifact`` reads ``[[required_artifacts]]``: a ``path`` glob that a
  successful call must have written or created (file tools, patches, and shell commands
  that visibly write: redirections, ``cp``, ``tee``…), or a ``tool`` glob that must have
  been called successfully. Checked at the end of the run; evidence of absence names
  what is missing. Medium, category ``missing_requirement``. Files an arbitrary program
  writes (``python build.py``) cannot be seen and do not count.

Neither rule does anything without its policy entries.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from proctor.rules._calls import argument, argument_strings, tool_matches
from proctor.rules._evidence import cite_absence
from proctor.rules._policy import HardStop as HardStopEntry
from proctor.rules._policy import Policy
from proctor.rules._rule import Hit, Rule, RuleContext
from proctor.rules._trace import Event
from proctor.rules.builtin._file_access import file_accesses, shell_source, succeeded
from proctor.rules.builtin._locations import path_matches
from proctor.rules.builtin._policy_support import origin, places
from proctor.rules.builtin._spans import cite_argument_span, shorten
from proctor.transcript import ToolCall


def _candidates(call: ToolCall, entry: HardStopEntry) -> Iterator[tuple[str, str, bool]]:
    """(field, text, exact) pairs to search; ``exact``: match offsets index the field."""
    if entry.argument is not None:
        value = argument(call, entry.argument)
        for path, text in argument_strings(value, f"arguments.{entry.argument}"):
            yield path, text, True
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            yield f"arguments.{entry.argument}", " ".join(value), False
        return
    source = shell_source(call)
    if source is not None and not source[2]:
        yield source[1], source[0], False  # an argv list, searched as one command line
    yield from ((path, text, True) for path, text in argument_strings(call.arguments))


def _match(call: ToolCall, entry: HardStopEntry) -> tuple[str, str, re.Match[str], bool] | None:
    if not tool_matches(call.name, [entry.tool]):
        return None
    pattern = re.compile(entry.pattern)
    for path, text, exact in _candidates(call, entry):
        found = pattern.search(text)
        if found is not None:
            return path, text, found, exact
    return None


class HardStop(Rule):
    """A tool call the policy says must never happen."""

    id = "hard_stop"
    version = 1
    category = "risk"
    description = "A call matching a policy hard stop (tool glob, argument, regular expression)."
    gate_mode = "deny"
    observes = frozenset({"call"})

    def active(self, policy: Policy) -> bool:
        return bool(policy.hard_stops)

    def observe(self, state: Any, event: Event, context: RuleContext) -> Iterable[Hit]:
        if event.kind != "call" or event.call is None:
            return ()
        return self._judge(event.call, context)

    def before_call(self, state: Any, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        return self._judge(call, context)

    def _judge(self, call: ToolCall, context: RuleContext) -> list[Hit]:
        hits = []
        for entry in context.policy.hard_stops:
            matched = _match(call, entry)
            if matched is None:
                continue
            path, _, found, exact = matched
            text = found.group(0)
            start, end = (found.start(), found.end()) if exact else (None, None)
            evidence = cite_argument_span(call, path, start, end, text)
            why = f" {entry.reason.rstrip('.')}." if entry.reason else ""
            hits.append(
                Hit(
                    title=f"Hard stop {entry.name!r}: {call.name}",
                    severity="high",
                    action="stop",
                    evidence=(evidence,),
                    content=(
                        f"{call.name} matched /{entry.pattern}/ in {path}: {shorten(text, 80)!r}."
                        f"{why} Hard stop {entry.name!r} from {origin(context.policy)}."
                    ),
                    actual=text,
                    threshold=entry.pattern,
                    trigger=call.source_id,
                )
            )
        return hits


@dataclass(slots=True)
class _Produced:
    paths: set[str] = field(default_factory=set)
    tools: set[str] = field(default_factory=set)


class MissingRequiredArtifact(Rule):
    """Something the run had to produce, never produced."""

    id = "missing_required_artifact"
    version = 1
    category = "missing_requirement"
    description = "A policy required artifact (file written, or tool called) missing at the end."
    observes = frozenset({"result"})

    def active(self, policy: Policy) -> bool:
        return bool(policy.required_artifacts)

    def start(self, context: RuleContext) -> _Produced:
        return _Produced()

    def observe(self, state: _Produced, event: Event, context: RuleContext) -> Iterable[Hit]:
        call = event.call
        if event.kind != "result" or call is None or not context.policy.required_artifacts:
            return ()
        if not succeeded(call):
            return ()
        state.tools.add(call.name)
        where = places(context)
        for access in file_accesses(call, context.policy.write_tools):
            if access.access == "write":
                state.paths.add(where.resolve(access.path, access.base))
        return ()

    def finish(self, state: _Produced, context: RuleContext) -> Iterable[Hit]:
        if context.trace.kind != "main":
            return []  # a sub-agent's run is part of its parent's; the parent is judged
        hits = []
        where = places(context)
        for required in context.policy.required_artifacts:
            if required.path is not None:
                glob = required.path
                if any(path_matches([glob], path, where) for path in state.paths):
                    continue
                missing = required.description or f"a file matching {glob}"
                title = f"Required artifact missing: {required.description or glob}"
                what = f"No successful call wrote or created a file matching {glob}"
            else:
                assert required.tool is not None
                glob = required.tool
                if any(tool_matches(name, [glob]) for name in state.tools):
                    continue
                missing = required.description or f"a successful {glob} call"
                title = f"Required tool call missing: {required.description or glob}"
                what = f"No call of a tool matching {glob} succeeded"
            hits.append(
                Hit(
                    title=title,
                    severity="medium",
                    evidence=(cite_absence(context.trace.conversation_id, missing),),
                    content=f"{what} ([[required_artifacts]] in {origin(context.policy)}).",
                    actual=None,
                    threshold=glob,
                )
            )
        return hits


RULES: list[Rule] = [HardStop(), MissingRequiredArtifact()]
