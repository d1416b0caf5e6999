"""The HTTP API (SPEC UI-2): a FastAPI app over the store, bound to loopback by default.

``create_app`` builds the app; ``proctor serve`` runs it under uvicorn. Every request
carries ``Authorization: Bearer TOKEN`` when a token is configured; off loopback a token
is required (``check_bind``).
"""

from __future__ import annotations

from proctor.api._app import StoreOpener, create_app
from proctor.api._auth import check_bind, is_loopback

__all__ = ["StoreOpener", "check_bind", "create_app", "is_loopback"]
