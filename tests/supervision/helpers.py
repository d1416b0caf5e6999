"""A controllable clock, a conversation that grows step by step, and executors for scheduler tests."""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import anyio

from proctor.rules import Trace
from proctor.sources import prepare_bundle
from proctor.store import SqlStore
from proctor.store._supervision_store import RunEnd, SupervisionSession
from proctor.supervision._scheduler import Analysis, AnalysisResult
from proctor.supervisor import Window, build_window
from proctor.transcript import (
    Conversation,
    ConversationBundle,
    Message,
    SubagentRun,
    Task,
    ToolCall,
    ToolStatus,
)

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


class ManualClock:
    """A clock that moves only when a test moves it."""

    def __init__(self, start: datetime = T0) -> None:
        self._now = start
        self._monotonic = 0.0

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._monotonic

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)
        self._monotonic += seconds


@dataclass
class Live:
    """A conversation an agent is writing: each step is stamped with the clock's time."""

    clock: ManualClock
    conversation_id: str = "test:live"
    cwd: str | None = None
    messages: list[Message] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)
    subagent_run: SubagentRun | None = None

    def user(self, text: str, *, kind: str = "prompt") -> Live:
        return self._message("user", kind, text)

    def reply(self, text: str) -> Live:
        return self._message("assistant", "reply", text)

    def call(
        self,
        command: str = "pytest -q",
        *,
        status: ToolStatus = "ok",
        result: str | None = "ok",
    ) -> Live:
        """A Bash call issued by the last assistant message (``pending``: no result yet)."""
        issuer = next(m for m in reversed(self.messages) if m.role == "assistant")
        number = len(self.calls) + 1
        self.calls.append(
            ToolCall(
                source_id=f"{self.conversation_id}:call-{number}",
                name="Bash",
                arguments={"command": command},
                call_id=f"call-{number}",
                message_source_id=issuer.source_id,
                status=status,
                result_text=None if status == "pending" else result,
                exit_code=1 if status == "error" else None,
                created_at=self.clock.now(),
                completed_at=None if status == "pending" else self.clock.now(),
            )
        )
        return self

    def _message(self, role: str, kind: str, text: str) -> Live:
        number = len(self.messages)
        self.messages.append(
            Message(
                source_id=f"{self.conversation_id}:m{number}",
                role=role,  # type: ignore[arg-type]
                kind=kind,  # type: ignore[arg-type]
                text=text,
                created_at=self.clock.now(),
                parent_source_id=self.messages[-1].source_id if self.messages else None,
            )
        )
        return self

    def bundle(self) -> ConversationBundle:
        started = self.messages[0].created_at if self.messages else None
        return ConversationBundle(
            conversation=Conversation(
                conversation_id=self.conversation_id,
                format="test",
                external_id=self.conversation_id.split(":")[-1],
                title="Live session",
                kind="subagent" if self.subagent_run else "main",
                project_hint="live-project",
                cwd=self.cwd,
                started_at=started,
            ),
            messages=tuple(self.messages),
            tool_calls=tuple(self.calls),
            tasks=tuple(self.tasks),
            subagent_run=self.subagent_run,
        )

    def trace(self) -> Trace:
        return Trace.from_bundle(self.bundle())

    def save(self, store: SqlStore) -> None:
        store.write_conversation(prepare_bundle(self.bundle()))


def session_for(
    *triggers: str,
    last_event_index: int = -1,
    every_n_steps: int | None = None,
    **changes: object,
) -> SupervisionSession:
    """A session value for trigger tests (not stored)."""
    session = SupervisionSession(
        session_id="s1",
        target_type="conversation",
        target_id="test:live",
        mode="general",
        triggers=triggers,
        every_n_steps=every_n_steps,
        throttle_seconds=30.0,
        budget_calls=None,
        budget_tokens=None,
        budget_period_seconds=3600.0,
        enabled=True,
        state="active",
        last_run_at=None,
        last_event_index=last_event_index,
        pending=False,
        created_at=T0,
        updated_at=T0,
    )
    return dataclasses.replace(session, **changes)  # type: ignore[arg-type]


@dataclass
class GatedExecutor:
    """An executor that builds the real window, then waits on a per-target gate when one is set.

    It records every window it analysed and how many analyses ran at once, in total and
    per target, so tests can hold an analysis in flight with anyio events.
    """

    store: SqlStore
    clock: ManualClock
    gates: dict[str, anyio.Event] = field(default_factory=dict)
    entered: dict[str, anyio.Event] = field(default_factory=dict)
    windows: list[Window] = field(default_factory=list)
    in_flight: Counter[str] = field(default_factory=Counter)
    peak_per_target: Counter[str] = field(default_factory=Counter)
    peak_total: int = 0

    def hold(self, target_id: str) -> tuple[anyio.Event, anyio.Event]:
        """The next analysis of ``target_id`` waits: (entered, release) events."""
        self.entered[target_id] = anyio.Event()
        self.gates[target_id] = anyio.Event()
        return self.entered[target_id], self.gates[target_id]

    async def execute(self, analysis: Analysis) -> AnalysisResult:
        target = analysis.target
        window = build_window(self.store.transcript(target.conversation_id), task_id=target.task_id)
        self.windows.append(window)
        self.in_flight[target.target_id] += 1
        self.peak_per_target[target.target_id] = max(
            self.peak_per_target[target.target_id], self.in_flight[target.target_id]
        )
        self.peak_total = max(self.peak_total, sum(self.in_flight.values()))
        try:
            gate = self.gates.pop(target.target_id, None)
            if gate is not None:
                self.entered.pop(target.target_id).set()
                await gate.wait()
        finally:
            self.in_flight[target.target_id] -= 1
        run = self.store.finish_supervision_run(
            analysis.run.run_id,
            RunEnd(
                status="ok",
                prompt_version=1,
                connection="fake",
                model="fake",
                error=None,
                findings=0,
                input_tokens=0,
                output_tokens=0,
                window_chars=window.chars,
                last_event_index=window.last_event_index,
            ),
            now=self.clock.now(),
        )
        return AnalysisResult(run=run)
