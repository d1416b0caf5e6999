"""Suggestions: list, show, accept, ignore."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(prefix="/suggestions", tags=["heartbeat"])
