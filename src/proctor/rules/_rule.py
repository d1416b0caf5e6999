"""What a rule is: a small versioned state machine over trace events.

A rule gets its own state per conversation (``start``), sees the kinds of event it
watches as they happen (``observe``; ``observes`` and ``watches`` name the kinds), may be
asked about a tool call that is about to run (``before_call``, the gate), and may conclude
at the end of a run (``finish``). It yields ``Hit``s; the engine turns them into
``Finding``s with stable keys.

Rules are deterministic: the same events give the same hits. They never see labels,
never call a model, and run in a few microseconds per event.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from proctor.findings import Action, Category, Evidence, Severity
from proctor.rules._policy import Policy, RuleMode
from proctor.rules._trace import EVENT_KINDS, Event, EventKind, TraceContext
from proctor.transcript import ToolCall


@dataclass(frozen=True, slots=True)
class Hit:
    """A rule firing: what it found and where."""

    title: str
    severity: Severity
    evidence: tuple[Evidence, ...]
    content: str = ""
    action: Action = "warn"
    category: Category | None = None
    """Defaults to the rule's category."""
    actual: Any = None
    threshold: Any = None
    trigger: str | None = None
    """Source id of the event that made the rule fire."""
    confidence: float = 1.0
    gate: RuleMode | None = None
    """What the gate should do for this hit, when it differs from the rule's ``gate_mode``
    (a rule whose serious cases deny and milder ones ask). The policy still wins."""


@dataclass(slots=True)
class RuleContext:
    """Per-conversation inputs shared by every rule."""

    policy: Policy
    trace: TraceContext
    facts: dict[str, Any] = field(default_factory=dict)
    """Memo for derived values several rules need (computed once per conversation)."""


class Rule(ABC):
    """Base of every deterministic rule. Subclasses override what they need."""

    id: ClassVar[str]
    """Stable id, e.g. ``unverified_claim``; used in findings, policies and docs."""
    version: ClassVar[int] = 1
    """Bumped whenever the rule's behaviour changes."""
    category: ClassVar[Category]
    """Category of its findings."""
    description: ClassVar[str]
    """One line for docs and ``proctor rules``."""
    gate_mode: ClassVar[RuleMode] = "warn"
    """What the gate does when this rule fires before a call, unless the policy says otherwise."""
    observes: ClassVar[frozenset[EventKind]] = EVENT_KINDS
    """The kinds of event ``observe`` looks at; the engine passes it no others."""

    def active(self, policy: Policy) -> bool:
        """False when the rule has nothing to do under ``policy`` (a budget with no limit):
        it is idle, and the engine neither starts it nor asks it about events, calls
        (``before_call``) or the end of a run (``finish``). Asked once per policy."""
        return True

    def watches(self, context: RuleContext) -> frozenset[EventKind]:
        """The kinds of event to pass to ``observe`` in this conversation (``observes``).

        Override only when they depend on the conversation; the engine then asks once
        per conversation. Returning none makes the rule idle in this conversation, as
        ``active`` does for a whole policy.
        """
        return self.observes

    def start(self, context: RuleContext) -> Any:
        """Fresh per-conversation state (default: none)."""
        return None

    def observe(self, state: Any, event: Event, context: RuleContext) -> Iterable[Hit]:
        """Update state with an event that happened; yield hits it causes."""
        return ()

    def before_call(self, state: Any, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        """Judge a call that is about to run (the gate); must not change state."""
        return ()

    def finish(self, state: Any, context: RuleContext) -> Iterable[Hit]:
        """Conclude at the end of a run (e.g. a required artifact never produced)."""
        return ()
