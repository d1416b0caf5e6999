"""The supervisor's prompts: one versioned system prompt per mode (SPEC SUP-1, SUP-6).

A prompt's ``system`` text is the whole of the trusted instructions for one call; the
observed data goes in the user message, framed as untrusted data (``_block``). A version
is bumped whenever the text sent changes, and every finding records the version that
produced it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from proctor.supervisor._decision import Mode
from proctor.supervisor.prompts import challenge, evidence, general, goal, risk
from proctor.supervisor.prompts._contract import system_text


@dataclass(frozen=True, slots=True)
class Prompt:
    """One mode's system prompt and its version."""

    mode: Mode
    version: int
    system: str


PROMPTS: Mapping[Mode, Prompt] = MappingProxyType(
    {
        "general": Prompt("general", general.VERSION, system_text(general.FOCUS)),
        "challenge": Prompt("challenge", challenge.VERSION, system_text(challenge.FOCUS)),
        "evidence": Prompt("evidence", evidence.VERSION, system_text(evidence.FOCUS)),
        "goal": Prompt("goal", goal.VERSION, system_text(goal.FOCUS)),
        "risk": Prompt("risk", risk.VERSION, system_text(risk.FOCUS)),
    }
)


def prompt_version(mode: Mode) -> int:
    """The version of ``mode``'s prompt, recorded with every run and finding."""
    return PROMPTS[mode].version


__all__ = ["PROMPTS", "Prompt", "prompt_version"]
