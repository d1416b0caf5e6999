"""The model supervisor (SPEC SUP-3, SUP-6, SUP-7): window, prompts, one checked call.

``build_window`` cuts the bounded, redacted view of one target a model may see;
``supervise`` sends it in one mode as untrusted data, validates the answer (one repair
at most), re-validates every cited id and returns findings of the shared ``Finding``
type — or ``unavailable`` with the reason, never a silent pass.
"""

from proctor.supervisor._block import data_block, encode_line, new_boundary, rejected_block
from proctor.supervisor._decision import (
    Decision,
    DecisionAction,
    Mode,
    SupervisorAnswer,
    answer_schema,
)
from proctor.supervisor._evidence import CheckedEvidence, check_evidence
from proctor.supervisor._findings import findings_from, rule_id
from proctor.supervisor._goal_detectors import detect_goal_findings
from proctor.supervisor._goal_tracking import GoalUpdate, track_goals, track_goals_lexically
from proctor.supervisor._goals import goal_hash, normalise_goal, user_turns
from proctor.supervisor._intent import (
    INTENT_PROMPT_VERSION,
    INTENT_SYSTEM_PROMPT,
    LOW_CONFIDENCE,
    classify_lexically,
    classify_turns,
)
from proctor.supervisor._items import Renderer, clip
from proctor.supervisor._run import REJECTED_CHARS, SupervisionOutcome, supervise, validate_answer
from proctor.supervisor._window import build_window, memory_notes
from proctor.supervisor._window_types import (
    TARGET_ID,
    MemoryNote,
    OpenFindingNote,
    TargetType,
    Window,
    WindowDropped,
    WindowItem,
    WindowLimits,
)
from proctor.supervisor.prompts import PROMPTS, Prompt, prompt_version

__all__ = [
    "INTENT_PROMPT_VERSION",
    "INTENT_SYSTEM_PROMPT",
    "LOW_CONFIDENCE",
    "PROMPTS",
    "REJECTED_CHARS",
    "TARGET_ID",
    "CheckedEvidence",
    "Decision",
    "DecisionAction",
    "GoalUpdate",
    "MemoryNote",
    "Mode",
    "OpenFindingNote",
    "Prompt",
    "Renderer",
    "SupervisionOutcome",
    "SupervisorAnswer",
    "TargetType",
    "Window",
    "WindowDropped",
    "WindowItem",
    "WindowLimits",
    "answer_schema",
    "build_window",
    "check_evidence",
    "classify_lexically",
    "classify_turns",
    "clip",
    "data_block",
    "detect_goal_findings",
    "encode_line",
    "findings_from",
    "goal_hash",
    "memory_notes",
    "new_boundary",
    "normalise_goal",
    "prompt_version",
    "rejected_block",
    "rule_id",
    "supervise",
    "track_goals",
    "track_goals_lexically",
    "user_turns",
    "validate_answer",
]
