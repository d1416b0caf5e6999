"""Rule family: permissions — what the agent may touch (SPEC SUP-4).

* ``write_in_ask_mode`` — with ``mode = "ask"`` (read-only) in the policy, any tool that
  writes (the built-in list or the policy's ``write_tools``) and any shell command that
  writes: high severity, ``stop``, gate ``deny``. A shell command Proctor cannot classify
  (``make``, ``python x.py``) may write: medium, ``warn``, and the gate still denies it.
* ``out_of_plan_tool`` — a tool not matching ``plan.allowed_tools``: medium (high when it
  writes), gate ``deny``. Reported once per tool name; the gate judges every call.
* ``out_of_plan_path`` — a path outside ``plan.allowed_paths`` (globs relative to a
  project root, or absolute), from file tools and shell command words: medium for
  reads, high for writes, gate ``deny``. System locations (``/usr``, ``/tmp``…) and the
  project roots themselves are not checked for reads.
* ``cross_project_read`` — reading outside every project root (the working folder plus
  ``plan.project_roots``), built in (no policy needed, only a working folder): medium,
  high for credential stores (``~/.ssh``, ``~/.aws``, ``/etc/shadow``…, which count even
  inside a root unless the policy names that root), gate ``ask``. System locations a
  normal build reads are ignored. Reported once per path.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from proctor.findings import Severity
from proctor.rules._calls import is_shell, tool_matches
from proctor.rules._policy import Policy
from proctor.rules._rule import Hit, Rule, RuleContext
from proctor.rules._trace import Event, EventKind
from proctor.rules.builtin._file_access import (
    FileAccess,
    file_accesses,
    shell_source,
    shell_workdir,
    writes_by_name,
)
from proctor.rules.builtin._locations import Places, display, path_matches, within
from proctor.rules.builtin._policy_support import (
    cite_access,
    cite_span,
    origin,
    places,
    resolved,
)
from proctor.rules.builtin._shell_classify import command_effects
from proctor.rules.builtin._spans import shorten
from proctor.transcript import ToolCall

_SCRATCH = ("/tmp", "/var/tmp", "/private/tmp", "/var/folders", "/private/var/folders", "/dev")


def _calls(event: Event) -> ToolCall | None:
    return event.call if event.kind == "call" else None


class WriteInAskMode(Rule):
    """A write while the policy says the agent may only read."""

    id = "write_in_ask_mode"
    version = 1
    category = "risk"
    description = 'A tool or shell command that writes while the policy sets mode = "ask".'
    gate_mode = "deny"
    observes = frozenset({"call"})

    def active(self, policy: Policy) -> bool:
        return policy.mode == "ask"

    def observe(self, state: Any, event: Event, context: RuleContext) -> Iterable[Hit]:
        call = _calls(event)
        return () if call is None else self._judge(call, context)

    def before_call(self, state: Any, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        return self._judge(call, context)

    def _judge(self, call: ToolCall, context: RuleContext) -> list[Hit]:
        policy = context.policy
        if policy.mode != "ask":
            return []
        rule_text = f'{origin(policy)} sets mode = "ask": the agent may only read'
        source = shell_source(call)
        if source is not None and not (
            policy.write_tools is not None and tool_matches(call.name, policy.write_tools)
        ):
            text, field, exact = source
            cause = command_effects(text).cause
            if cause is None:
                return []
            span = (cause.start, cause.end) if exact else (None, None)
            part = text[cause.start : cause.end] if exact else text
            definite = cause.verdict == "writes"
            title = "Write in ask mode" if definite else "Command that may write in ask mode"
            return [
                Hit(
                    title=f"{title}: {call.name} {shorten(part)}",
                    severity="high" if definite else "medium",
                    action="stop" if definite else "warn",
                    evidence=(cite_span(call, field, text, *span),),
                    content=f"{rule_text}. This command {cause.reason}.",
                    actual=part,
                    threshold="mode = ask",
                    trigger=call.source_id,
                )
            ]
        if not writes_by_name(call, policy.write_tools):
            return []
        accesses = file_accesses(call, policy.write_tools)
        target = accesses[0] if accesses else None
        folders = places(context)
        where = (
            f" {shorten(folders.show(folders.resolve(target.path, target.base)))}"
            if target is not None
            else ""
        )
        evidence = (
            cite_access(call, target)
            if target is not None
            else cite_span(call, "arguments", json.dumps(call.arguments, default=str))
        )
        listed = (
            "the policy's write_tools"
            if policy.write_tools is not None
            else "Proctor's list of writing tools"
        )
        return [
            Hit(
                title=f"Write in ask mode: {call.name}{where}",
                severity="high",
                action="stop",
                evidence=(evidence,),
                content=f"{rule_text}. {call.name} is in {listed}.",
                actual=call.name,
                threshold="mode = ask",
                trigger=call.source_id,
            )
        ]


class OutOfPlanTool(Rule):
    """A tool the plan snapshot does not allow."""

    id = "out_of_plan_tool"
    version = 1
    category = "goal_drift"
    description = "A tool call whose tool does not match the plan's allowed_tools."
    gate_mode = "deny"
    observes = frozenset({"call"})

    def active(self, policy: Policy) -> bool:
        return policy.plan.allowed_tools is not None

    def start(self, context: RuleContext) -> set[str]:
        return set()

    def observe(self, state: set[str], event: Event, context: RuleContext) -> Iterable[Hit]:
        call = _calls(event)
        if call is None or call.name.lower() in state:
            return ()
        hits = self._judge(call, context)
        if hits:
            state.add(call.name.lower())
        return hits

    def before_call(self, state: set[str], call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        return self._judge(call, context)

    def _judge(self, call: ToolCall, context: RuleContext) -> list[Hit]:
        allowed = context.policy.plan.allowed_tools
        if allowed is None or tool_matches(call.name, allowed):
            return []
        source = shell_source(call)
        writes = writes_by_name(call, context.policy.write_tools) or (
            source is not None and command_effects(source[0]).verdict != "read_only"
        )
        listing = ", ".join(allowed) if allowed else "no tools"
        return [
            Hit(
                title=f"Tool outside the plan: {call.name}",
                severity="high" if writes else "medium",
                evidence=(cite_span(call, "name", call.name),),
                content=(
                    f"The plan in {origin(context.policy)} allows {listing} "
                    f"(plan.allowed_tools); the agent called {call.name}."
                ),
                actual=call.name,
                threshold=list(allowed),
                trigger=call.source_id,
            )
        ]


class OutOfPlanPath(Rule):
    """A file read or written outside the plan's allowed paths."""

    id = "out_of_plan_path"
    version = 1
    category = "goal_drift"
    description = "A file path, from a file tool or a shell command, outside plan.allowed_paths."
    gate_mode = "deny"
    observes = frozenset({"call"})

    def active(self, policy: Policy) -> bool:
        return policy.plan.allowed_paths is not None

    def start(self, context: RuleContext) -> set[tuple[str, bool]]:
        return set()

    def observe(
        self, state: set[tuple[str, bool]], event: Event, context: RuleContext
    ) -> Iterable[Hit]:
        call = _calls(event)
        if call is None:
            return ()
        hits = []
        for path, reads, hit in self._judge(call, context):
            if (path, reads) not in state:
                state.add((path, reads))
                hits.append(hit)
        return hits

    def before_call(self, state: Any, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        return [hit for _, _, hit in self._judge(call, context)]

    def _judge(self, call: ToolCall, context: RuleContext) -> list[tuple[str, bool, Hit]]:
        allowed = context.policy.plan.allowed_paths
        if allowed is None:
            return []
        where = places(context)
        found: list[tuple[str, bool, Hit]] = []
        for access in file_accesses(call, context.policy.write_tools):
            path = where.resolve(access.path, access.base)
            reads = access.access == "read"
            if _exempt_from_plan(path, reads, where) or path_matches(allowed, path, where):
                continue
            shown = where.show(path)
            verb = "Read" if reads else "Write"
            found.append((path, reads, Hit(
                title=f"{verb} outside the planned paths: {shorten(shown)}",
                severity="medium" if reads else "high",
                evidence=(cite_access(call, access),),
                content=(
                    f"{call.name} {'reads' if reads else _verb(access)} {shown}; the plan in "
                    f"{origin(context.policy)} allows only {', '.join(allowed) or 'no paths'} "
                    "(plan.allowed_paths)."
                ),
                actual=shown,
                threshold=list(allowed),
                trigger=call.source_id,
            )))  # fmt: skip
        return found


def _verb(access: FileAccess) -> str:
    return {"write": "writes", "delete": "deletes", "modify": "changes"}.get(access.access, "uses")


def _exempt_from_plan(path: str, reads: bool, where: Places) -> bool:
    if any(within(path, folder) for folder in _SCRATCH):
        return True
    return reads and (path in where.roots or where.location(path) == "system")


class CrossProjectRead(Rule):
    """Reading files of another project, another user, or a credential store."""

    id = "cross_project_read"
    version = 1
    category = "risk"
    description = "A read outside every project root (credential stores always count)."
    gate_mode = "ask"
    observes = frozenset({"call"})

    def watches(self, context: RuleContext) -> frozenset[EventKind]:
        # Without a project root (no working folder, no plan roots) nothing is outside one.
        return self.observes if places(context).roots else frozenset()

    def start(self, context: RuleContext) -> set[str]:
        return set()

    def observe(self, state: set[str], event: Event, context: RuleContext) -> Iterable[Hit]:
        call = _calls(event)
        if call is None:
            return ()
        hits = []
        for path, hit in self._judge(call, context):
            if path not in state:
                state.add(path)
                hits.append(hit)
        return hits

    def before_call(self, state: Any, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        return [hit for _, hit in self._judge(call, context)]

    def _judge(self, call: ToolCall, context: RuleContext) -> list[tuple[str, Hit]]:
        where = places(context)
        if not where.roots:
            return []
        accesses = [
            a for a in file_accesses(call, context.policy.write_tools) if a.access == "read"
        ]
        workdir = shell_workdir(call) if is_shell(call) else None
        source = shell_source(call)
        if workdir is not None and source is not None:
            field = next(
                (f"arguments.{k}" for k, v in call.arguments.items() if v == workdir), "arguments"
            )
            accesses.append(FileAccess(workdir, "read", field))
        found: list[tuple[str, Hit]] = []
        for access in accesses:
            path = resolved(where, access)
            if path is None:
                continue
            hit = self._hit(call, access, path, where, context)
            if hit is not None:
                found.append((path, hit))
        return found

    def _hit(
        self, call: ToolCall, access: FileAccess, path: str, where: Places, context: RuleContext
    ) -> Hit | None:
        location = where.location(path)
        severity: Severity
        allowed = context.policy.plan.allowed_paths
        if allowed and path_matches([p for p in allowed if p.startswith(("/", "~"))], path, where):
            return None
        if location == "credentials":
            if any(within(path, root) for root in where.explicit_roots):
                return None
            kind, severity = "Read of a credential store", "high"
        elif location == "system" or where.inside_project(path):
            return None
        elif where.someone_elses_home(path):
            kind, severity = "Read in another user's home", "medium"
        else:
            kind, severity = "Read outside the project", "medium"
        shown = display(path, where.home)
        roots = ", ".join(display(root, where.home) for root in where.roots)
        what = "a credential store" if location == "credentials" else "outside every project root"
        named = (
            f" and plan.project_roots in {origin(context.policy)}" if where.explicit_roots else ""
        )
        return Hit(
            title=f"{kind}: {shorten(shown)}",
            severity=severity,
            evidence=(cite_access(call, access),),
            content=(
                f"{call.name} reads {shown}, {what}. The project roots are {roots} "
                f"(the working folder{named})."
            ),
            actual=shown,
            threshold=[display(root, where.home) for root in where.roots],
            trigger=call.source_id,
        )


RULES: list[Rule] = [WriteInAskMode(), OutOfPlanTool(), OutOfPlanPath(), CrossProjectRead()]
