"""Goal versions and user-turn intent labels (SPEC GOAL-1, GOAL-2)."""

from __future__ import annotations

from proctor.store._base import StoreBase


class GoalStore(StoreBase):
    """Goal versions and user-turn intent labels; every write one transaction."""
