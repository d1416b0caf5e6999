"""Continue a discussion (UI-5): a context draft built from a result."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["discussion"])
