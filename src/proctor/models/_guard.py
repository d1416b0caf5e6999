"""A switch that makes real model calls impossible (tests, CI, offline demos).

With ``PROCTOR_ALLOW_MODEL_REQUESTS=0`` only loopback endpoints (a scripted test server)
and local GGUF files may be called; anything else raises before a connection is opened.
The test suite sets it for every test.
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

from proctor.errors import ModelError

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def model_requests_allowed() -> bool:
    """False when ``PROCTOR_ALLOW_MODEL_REQUESTS`` is ``0``/``false``/``no``."""
    return os.environ.get("PROCTOR_ALLOW_MODEL_REQUESTS", "1").lower() not in ("0", "false", "no")


def check_allowed(base_url: str) -> None:
    """Raise unless requests are allowed or ``base_url`` is on this machine."""
    if model_requests_allowed():
        return
    host = urlparse(base_url).hostname or ""
    if host not in _LOOPBACK:
        raise ModelError(
            "config",
            f"real model requests are disabled (PROCTOR_ALLOW_MODEL_REQUESTS=0); refused {base_url}",
        )
