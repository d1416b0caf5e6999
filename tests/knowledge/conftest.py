"""Fixtures shared with the discussion tests: a small hostile result and the examples."""

from tests.discussion.conftest import (
    HOSTILE,
    database,
    hostile_draft,
    prepared_database,
    store,
)

__all__ = ["HOSTILE", "database", "hostile_draft", "prepared_database", "store"]
