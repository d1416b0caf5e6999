"""The ``Duration`` option type (``30s``, ``5m``, ``24h``, ``7d``), in a module of its own so
a command that takes one (``proctor serve``) need not import the heartbeat to parse it."""

from __future__ import annotations

import re
from typing import Any

import click

_DURATION = re.compile(r"^\s*(\d+)\s*(s|m|h|d)?\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class Duration(click.ParamType[float, Any]):
    """A duration: ``30s``, ``5m``, ``24h``, ``7d`` (a bare number is in ``unit``)."""

    name = "duration"

    def __init__(self, unit: str = "s") -> None:
        self.unit = unit

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, int | float):
            return float(value)
        match = _DURATION.match(str(value))
        if match is None or int(match.group(1)) == 0:
            self.fail(f"{value!r} is not a duration like 30s, 5m, 24h or 7d", param, ctx)
        return float(int(match.group(1)) * _SECONDS[match.group(2) or self.unit])
