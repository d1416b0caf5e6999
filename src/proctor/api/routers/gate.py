"""The pre-tool gate over HTTP (SUP-5): the same decision as `proctor gate`."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(prefix="/gate", tags=["gate"])
