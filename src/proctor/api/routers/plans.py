"""Heartbeat plans: list, show, create, update, delete."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(prefix="/plans", tags=["heartbeat"])
