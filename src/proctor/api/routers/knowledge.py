"""The local knowledge base (UI-5): list, read, preview and confirm writes."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(prefix="/knowledge", tags=["knowledge"])
