"""Per-conversation gate state: one live supervisor per conversation, fed only new events.

A long-lived caller (the HTTP endpoint, the benchmark, tests) keeps one ``GateService``.
Per conversation it holds a ``Supervisor`` that has seen every event so far: ``observe``
feeds it only the events it has not seen (matched by kind and stable source id), and
``decide`` asks it about a proposed call without changing it, so no decision re-reads the
history. Conversations live in a bounded LRU; one that falls out is rebuilt from the
history loader on its next decision. The hook process builds a service, decides once and
exits.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from proctor.findings import Finding
from proctor.gate._history import History
from proctor.gate._request import GateRequest, proposed_call
from proctor.rules import (
    Event,
    GateDecision,
    Policy,
    Rule,
    Supervisor,
    TraceContext,
    find_policy,
)

HistoryLoader = Callable[[GateRequest], History]
"""Loads a conversation's past events the first time the service is asked about it."""


@dataclass(slots=True)
class HeldConversation:
    """One conversation's supervisor and everything it was fed."""

    supervisor: Supervisor
    policy: Policy
    events: list[Event]
    """Everything fed so far, kept to rebuild the supervisor when the policy changes."""
    seen: set[tuple[str, str]]


class PolicyCache:
    """``find_policy`` per working folder and project, looked up again after ``ttl_s``.

    The lookup walks the folders above ``cwd`` and parses the policy file; a long-lived
    service does that at most once per ``ttl_s`` per folder, and still notices an edited
    or newly created policy file within that time.
    """

    def __init__(
        self,
        ttl_s: float = 2.0,
        *,
        max_entries: int = 256,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl_s = ttl_s
        self._max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[tuple[str | None, str | None], tuple[Policy, float]] = (
            OrderedDict()
        )

    def policy_for(self, cwd: str | None, project: str | None) -> Policy:
        """The policy that applies; raises ``ConfigError`` for an invalid policy file."""
        key = (cwd, project)
        now = self._clock()
        cached = self._entries.get(key)
        if cached is not None and now - cached[1] < self._ttl_s:
            return cached[0]
        policy = find_policy(cwd=cwd, project=project)
        self._entries[key] = (policy, now)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)
        return policy


class GateService:
    """Answers gate requests from per-conversation supervisors kept between requests.

    Args:
        policy: one policy for every conversation; unset means the policy found for each
            request's working folder and project (``find_policy``), cached briefly.
        rules: the rules to run (default: every built-in rule).
        history: loads a conversation's past events the first time it is asked about;
            unset means a new conversation starts empty (feed it with ``observe``).
        max_conversations: how many conversations to keep supervisors for (LRU).
        policies: where policies found per request are cached (default: 2 seconds).
    """

    def __init__(
        self,
        *,
        policy: Policy | None = None,
        rules: Sequence[Rule] | None = None,
        history: HistoryLoader | None = None,
        max_conversations: int = 256,
        policies: PolicyCache | None = None,
    ) -> None:
        if max_conversations < 1:
            raise ValueError("max_conversations must be at least 1")
        self._policy = policy
        self._policies = policies or PolicyCache()
        self._rules = rules
        self._history = history
        self._max = max_conversations
        self._conversations: OrderedDict[str, HeldConversation] = OrderedDict()
        self._lock = threading.RLock()
        self.events_fed = 0
        """Events fed to supervisors since the service was made (history included)."""

    def __len__(self) -> int:
        return len(self._conversations)

    def __contains__(self, conversation_id: object) -> bool:
        return conversation_id in self._conversations

    def events_seen(self, conversation_id: str) -> int:
        """How many events of a conversation its supervisor has seen (0 when not held)."""
        held = self._conversations.get(conversation_id)
        return 0 if held is None else len(held.events)

    def observe(
        self, conversation_id: str, events: Iterable[Event], *, context: TraceContext | None = None
    ) -> list[Finding]:
        """Feed events that happened; those already seen are skipped. Returns new findings.

        ``context`` describes a conversation the service does not hold yet (its working
        folder and project choose the policy); it is ignored for one already held.
        """
        with self._lock:
            held = self._conversations.get(conversation_id)
            if held is None:
                known = context or TraceContext(conversation_id=conversation_id)
                policy = self._policy_for(known.cwd, known.project)
                held = self._start(
                    dataclasses.replace(known, conversation_id=conversation_id), policy
                )
            return self._feed(held, events)

    def decide(self, request: GateRequest) -> GateDecision:
        """May the proposed call run? Raises ``ConfigError`` when the policy is invalid."""
        with self._lock:
            held = self._conversations.get(request.conversation_id)
            if held is None:
                held = self._load(request)
            else:
                self._conversations.move_to_end(request.conversation_id)
                context = held.supervisor.context
                policy = self._policy_for(request.cwd or context.cwd, context.project)
                if policy is not held.policy and policy != held.policy:
                    held = self._restart(held, policy)
            return held.supervisor.before_call(proposed_call(request))

    def held(self, conversation_id: str) -> HeldConversation | None:
        """The conversation's supervisor and events, when held (to hand to another process)."""
        return self._conversations.get(conversation_id)

    def hold(self, conversation_id: str, held: HeldConversation) -> None:
        """Take up a conversation another service (or process) built."""
        with self._lock:
            self._conversations[conversation_id] = held
            self._conversations.move_to_end(conversation_id)
            while len(self._conversations) > self._max:
                self._conversations.popitem(last=False)

    def forget(self, conversation_id: str) -> None:
        """Drop a conversation's supervisor (it is rebuilt from history if asked again)."""
        with self._lock:
            self._conversations.pop(conversation_id, None)

    def _policy_for(self, cwd: str | None, project: str | None) -> Policy:
        if self._policy is not None:
            return self._policy
        return self._policies.policy_for(cwd, project)

    def _load(self, request: GateRequest) -> HeldConversation:
        if self._history is not None:
            history = self._history(request)
            context = dataclasses.replace(history.context, conversation_id=request.conversation_id)
            events = history.events
        else:
            context = TraceContext(
                conversation_id=request.conversation_id,
                project=request.project,
                cwd=request.cwd,
                format=request.transcript_format,
            )
            events = ()
        # The policy is looked up from where the agent is now, as the agent's hook reports it.
        held = self._start(context, self._policy_for(request.cwd or context.cwd, context.project))
        self._feed(held, events)
        return held

    def _start(self, context: TraceContext, policy: Policy) -> HeldConversation:
        held = HeldConversation(Supervisor(context, policy, self._rules), policy, [], set())
        self._conversations[context.conversation_id] = held
        self._conversations.move_to_end(context.conversation_id)
        while len(self._conversations) > self._max:
            self._conversations.popitem(last=False)
        return held

    def _restart(self, held: HeldConversation, policy: Policy) -> HeldConversation:
        # The policy decides which rules run and with what limits: replay under the new one.
        fresh = Supervisor(held.supervisor.context, policy, self._rules)
        fresh.observe_all(held.events)
        self.events_fed += len(held.events)
        held.supervisor, held.policy = fresh, policy
        return held

    def _feed(self, held: HeldConversation, events: Iterable[Event]) -> list[Finding]:
        found: list[Finding] = []
        for event in events:
            key = (event.kind, event.source_id)
            if key in held.seen:
                continue
            held.seen.add(key)
            if event.index != len(held.events):
                event = dataclasses.replace(event, index=len(held.events))
            held.events.append(event)
            found.extend(held.supervisor.observe(event))
            self.events_fed += 1
        return found
