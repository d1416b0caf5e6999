"""Model connections (secrets never returned) and the supervisor model choice."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(prefix="/connections", tags=["models"])
