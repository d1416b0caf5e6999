"""Event titles of runs, written and read back in one place.

A test run or command titles itself ``<label> failed (<detail>)`` when it failed; the
open item it leaves (``derive_open_items``) is titled ``<label> still failing`` from the
event alone, so the two formats live side by side here.
"""

from __future__ import annotations

import re

from proctor._util.text import one_line
from proctor.review.structural._builder import Outcome

_FAILED = re.compile(r"^(?P<label>.+) failed(?: \([^()]*\))?$", re.DOTALL)


def short(text: str, limit: int = 60) -> str:
    """One line of at most ``limit`` characters (blanks collapsed, ``…`` where cut)."""
    return one_line(text, limit)


def run_title(label: str, outcome: Outcome, detail: str = "", *, ok_verb: str = "passed") -> str:
    """``pytest failed (2 failed, 22 passed)``, ``pytest passed (24 passed)``, ``Ran ls``."""
    suffix = f" ({detail})" if detail else ""
    if outcome == "failed":
        return f"{label} failed{suffix}"
    if outcome == "ok":
        return f"{label} {ok_verb}{suffix}" if ok_verb else f"Ran {label}{suffix}"
    return f"Started {label} (no result recorded)"


def failed_label(title: str) -> str | None:
    """The label of a ``<label> failed (…)`` title, or None for other titles."""
    match = _FAILED.match(title)
    return None if match is None else match.group("label")
