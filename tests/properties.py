"""How many cases the property tests draw: a share of them in ``make test``, all in ``make fuzz``.

The equivalence properties of ``tests/rules`` and ``tests/sources`` (a fast path against
the plain reading it replaces) were sized to sweep rare branches: hundreds to thousands of
generated cases each, about a tenth of the SQLite pass's test time. ``make test`` draws a
quarter of each (never fewer than 100); ``make fuzz`` sets ``PROCTOR_PROPERTY_SCALE=1`` and
runs every property test (marker ``property``) at its full size. ``make check``, the inner
loop, sets a tenth: below the quarter the floor shrinks in proportion (40 instead of 100),
so every property still runs, on fewer cases, and ``make test`` keeps its counts.
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
    app (tests/api/test_openapi_conformance.py) sets a lower floor than the pure ones.
    A share below the default (``make check`` sets 0.1) lowers the floor in proportion, never
    below one case: a tenth draws at least 40 where ``make test`` draws at least 100."""
    share = scale()
    floor = max(1, round(floor * min(1.0, share / DEFAULT_SCALE)))
    return max(min(full, floor), round(full * share))
