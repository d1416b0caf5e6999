"""Live supervision sessions: list, show, enable, disable."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(prefix="/sessions", tags=["supervision"])
