"""How many cases the property tests draw: a share of them in ``make test``, all in ``make fuzz``.

The equivalence properties of ``tests/rules`` and ``tests/sources`` (a fast path against
the plain reading it replaces) were sized to sweep rare branches: hundreds to thousands of
generated cases each, about a tenth of the SQLite pass's test time. ``make test`` draws a
quarter of each (never fewer than 100); ``make fuzz`` sets ``PROCTOR_PROPERTY_SCALE=1`` and
runs every property test (marker ``property``) at its full size.
"""

from __future__ import annotations

import os

SCALE_VARIABLE = "PROCTOR_PROPERTY_SCALE"
DEFAULT_SCALE = 0.25
FLOOR = 100


def scale() -> float:
    """``PROCTOR_PROPERTY_SCALE`` when it is a positive number, else the default share."""
    raw = os.environ.get(SCALE_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_SCALE
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(
            f"{SCALE_VARIABLE}={raw!r} is not a number: set it to a share such as 0.25 or 1"
        ) from None
    if value <= 0:
        raise ValueError(f"{SCALE_VARIABLE}={raw!r} must be above 0")
    return value


def examples(full: int, floor: int = FLOOR) -> int:
    """The cases to draw of a property sized ``full``: its share, at least ``floor`` (or
    ``full`` when that is smaller). A property whose every case is a request through the
    app (tests/api/test_openapi_conformance.py) sets a lower floor than the pure ones."""
    return max(min(full, floor), round(full * scale()))
