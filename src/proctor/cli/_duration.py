"""The ``Duration`` option type (``30s``, ``5m``, ``24h``, ``7d``), in a module of its own so
a command that takes one (``proctor serve``) need not import the heartbeat to parse it."""

from __future__ import annotations

import re
from typing import Any

import click

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class Duration(click.ParamType[float, Any]):
    """A duration in seconds: ``30s``, ``5m``, ``24h``, ``7d`` (a bare number is in ``unit``).

    ``fractions``: ``1.5h`` is taken too (else only whole numbers); ``zero``: ``0s`` is
    taken too (else a duration is at least one unit).
    """

    name = "duration"

    def __init__(self, unit: str = "s", *, fractions: bool = False, zero: bool = False) -> None:
        self.unit = unit
        self.fractions = fractions
        self.zero = zero

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, int | float):
            return float(value)
        match = _DURATION.match(str(value))
        number = None if match is None else match.group(1)
        if (
            match is None
            or number is None
            or ("." in number and not self.fractions)
            or (float(number) == 0 and not self.zero)
        ):
            self.fail(f"{value!r} is not a duration like 30s, 5m, 24h or 7d", param, ctx)
        seconds = _SECONDS[match.group(2) or self.unit]
        return float(number) * seconds if self.fractions else float(int(number) * seconds)
