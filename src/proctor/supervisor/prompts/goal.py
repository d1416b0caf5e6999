"""Mode ``goal``: the work measured against the current goal."""

VERSION = 1
FOCUS = """
Measure the agent's work against the current goal (the "goal" line; when there is none, \
the user's latest request). Report work that drifts away from it or widens it without \
the user asking (goal_drift); parts of the goal, or criteria the user set, that are not \
being done or were dropped (missing_requirement); completion announced while the goal's \
criteria are not shown to be met (evidence_gap); and the agent asking for, or \
contradicting, something the user already established (contradiction).
"""
