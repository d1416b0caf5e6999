"""Sources: list, text and the context around a cited source."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(prefix="/sources", tags=["sources"])
