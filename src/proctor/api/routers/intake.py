"""Live intake (ING-7): Proctor JSONL events and OTLP/HTTP trace exports."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["intake"])

otlp_router = APIRouter(tags=["intake"])
"""Mounted at the root: ``POST /v1/traces`` is where OTLP/HTTP exporters send spans."""
