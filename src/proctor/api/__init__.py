"""The HTTP API (SPEC UI-2): a FastAPI app over the store, bound to loopback by default.

``create_app`` builds the app; ``proctor serve`` runs it under uvicorn. Every request
carries ``Authorization: Bearer TOKEN`` when a token is configured; off loopback a token
is required (``check_bind``). Requests must name the server as bound, and no other web
site's page may change its data (``_guard``).
"""

from __future__ import annotations

from proctor.api._app import StoreOpener, create_app
from proctor.api._auth import check_bind, is_loopback
from proctor.api._guard import ALLOWED_HOSTS_ENV, allowed_hosts_from_env

__all__ = [
    "ALLOWED_HOSTS_ENV",
    "StoreOpener",
    "allowed_hosts_from_env",
    "check_bind",
    "create_app",
    "is_loopback",
]
