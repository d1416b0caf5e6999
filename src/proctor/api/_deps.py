"""What every route receives: the app's store and validated pagination."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request

from proctor.store import SqlStore


def _store(request: Request) -> SqlStore:
    holder = request.app.state.store_holder
    store: SqlStore = holder.get()
    return store


StoreDep = Annotated[SqlStore, Depends(_store)]
"""The store the app opened once."""

Limit = Annotated[int, Query(ge=1, le=100, description="How many items (1–100).")]
"""A page size."""

Offset = Annotated[int, Query(ge=0, description="How many items to skip.")]
"""Where a page starts."""
