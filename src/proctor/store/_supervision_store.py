"""Supervision sessions and runs (SPEC SUP-1, SUP-2, SUP-9)."""

from __future__ import annotations

from proctor.store._base import StoreBase


class SupervisionStore(StoreBase):
    """Supervision sessions and runs; every write one transaction."""
