"""Carrying out one claimed analysis with the supervisor's model (SPEC SUP-3…SUP-7, MOD-2…4).

The connection is resolved once per execution and kept for every stage of it (MOD-3);
the pool limits are read once, when the run starts (MOD-4). The window holds the target
as it is now and a summary of its still-open findings. The run then ends in one of three
ways, each recorded with its tokens, connection, model, prompt version and window size:

Before the window is built, new user turns are classified (by the model in ``goal`` mode,
lexically otherwise) and the goal versions they create recorded (GOAL-1, GOAL-2), so the
window carries the current goal, with the confirmed memories of the conversation's project
(SUP-3, SUP-10; labelled as memory, within the window's budget); after the model
answered, the deterministic goal detectors (GOAL-3) run over the same conversation.

* ``ok`` — the findings (origin ``model``, plus the goal detectors' rule findings) are
  recorded by key, like rule findings;
* ``unavailable`` — the model could not be reached or gave no valid answer after one
  repair: recorded as such, never as a pass;
* ``failed`` — a setting must be fixed (e.g. a pinned connection that is gone or lacks
  its key: never a fallback), or the target could not be read.

Findings are one transaction, the run's end with what its session now covers another.
"""

from __future__ import annotations

from proctor.errors import ModelError, ProctorError
from proctor.findings import Finding, Status
from proctor.gate import stored_trace
from proctor.models import (
    ModelConnection,
    ModelPool,
    open_caller,
    pool_limits,
    resolve_supervisor_connection,
    store_recorder,
)
from proctor.store import RunEnd
from proctor.supervision._scheduler import Analysis, AnalysisResult, Clock
from proctor.supervision._sessions import SessionStore
from proctor.supervisor import (
    SupervisionOutcome,
    Window,
    WindowLimits,
    build_window,
    detect_goal_findings,
    memory_notes,
    prompt_version,
    supervise,
    track_goals,
)

OPEN_STATUSES: tuple[Status, ...] = ("open", "acknowledged")
MODEL_INTENT_TURNS = 3
"""In ``goal`` mode, at most this many new user turns are classified by the model per
analysis (older unlabelled turns of a conversation seen for the first time get the
lexical fallback). Other modes classify lexically and spend no model call on intent."""


class ModelExecutor:
    """The real ``Executor``: one analysis through the supervisor's own model pool."""

    def __init__(
        self,
        store: SessionStore,
        *,
        clock: Clock,
        window_limits: WindowLimits | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.window_limits = window_limits or WindowLimits()
        self._pool: ModelPool | None = None

    async def execute(self, analysis: Analysis) -> AnalysisResult:
        """Analyse the target, record the findings and the run's end, return the result."""
        started = self.clock.monotonic()
        try:
            connection, window, outcome = await self._analyse(analysis)
        except ModelError as exc:
            return self._fail(analysis, str(exc), started, config=exc.kind == "config")
        except ProctorError as exc:
            return self._fail(analysis, str(exc), started)
        except BaseException as exc:
            # A bug or a cancellation: the run must not stay "running"; then let it through.
            self._fail(analysis, f"interrupted: {type(exc).__name__}", started)
            raise
        findings = outcome.findings + tuple(self._goal_findings(analysis))
        recorded = self.store.record_findings(findings) if findings else None
        run = self.store.finish_supervision_run(
            analysis.run.run_id,
            RunEnd(
                status=outcome.status,
                prompt_version=outcome.prompt_version,
                connection=connection.name,
                model=connection.model,
                error=outcome.error,
                findings=len(findings),
                input_tokens=outcome.input_tokens,
                output_tokens=outcome.output_tokens,
                window_chars=outcome.window_chars,
                last_event_index=window.last_event_index,
            ),
            now=self.clock.now(),
        )
        return AnalysisResult(
            run=run,
            findings=findings,
            new_findings=recorded.new if recorded is not None else (),
            seconds=self.clock.monotonic() - started,
        )

    async def _analyse(
        self, analysis: Analysis
    ) -> tuple[ModelConnection, Window, SupervisionOutcome]:
        connection = resolve_supervisor_connection(self.store)
        limits = pool_limits(self.store)
        if self._pool is None:
            self._pool = ModelPool(limits.concurrency)
        caller = open_caller(
            connection, limits=limits, recorder=store_recorder(self.store), pool=self._pool
        )
        # Classify new user turns first, so the window carries the goal as it is now.
        await track_goals(
            self.store,
            analysis.target.conversation_id,
            caller=caller if analysis.mode == "goal" else None,
            run_id=analysis.run.run_id,
            model_turns=MODEL_INTENT_TURNS,
        )
        window = self._window(analysis)
        outcome = await supervise(caller, window, analysis.mode, run_id=analysis.run.run_id)
        return connection, window, outcome

    def _goal_findings(self, analysis: Analysis) -> list[Finding]:
        """The deterministic goal detectors (GOAL-3) over the target's conversation."""
        conversation_id = analysis.target.conversation_id
        trace = stored_trace(self.store.transcript(conversation_id))
        return detect_goal_findings(trace, self.store.goal_versions(conversation_id))

    def _window(self, analysis: Analysis) -> Window:
        target = analysis.target
        transcript = self.store.transcript(target.conversation_id)
        open_findings, _ = self.store.findings(
            conversation_ids=[target.conversation_id], statuses=OPEN_STATUSES
        )
        goal = self.store.current_goal(target.target_id)
        return build_window(
            transcript,
            limits=self.window_limits,
            open_findings=open_findings,
            memories=memory_notes(self.store, target.conversation_id, self.window_limits),
            goal=goal.goal if goal is not None and not goal.closed else None,
            task_id=target.task_id,
        )

    def _fail(
        self, analysis: Analysis, error: str, started: float, *, config: bool = False
    ) -> AnalysisResult:
        run = self.store.finish_supervision_run(
            analysis.run.run_id,
            RunEnd(
                status="failed",
                prompt_version=prompt_version(analysis.mode),
                connection=None,
                model=None,
                error=error,
                findings=0,
                input_tokens=0,
                output_tokens=0,
                window_chars=0,
                last_event_index=None,
            ),
            now=self.clock.now(),
        )
        return AnalysisResult(
            run=run, seconds=self.clock.monotonic() - started, config_error=config
        )
