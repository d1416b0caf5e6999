"""Why a review read nothing (REV-7): an empty scope, an empty time range, or nothing new.

A run ends ``no_change`` when its manifest is empty. That has three causes a person needs
told apart: the scope holds no sources at all; ``--since``/``--until`` leave none of its
sources in range (even on a scope never reviewed); or every source in range was already
read by the last review. Only the last one means "nothing new".
"""

from __future__ import annotations

from datetime import datetime

from proctor.store import ReviewRunRecord, ReviewScope, SqlStore


def no_change_reason(store: SqlStore, run: ReviewRunRecord) -> str:
    """One sentence on why ``run`` (status ``no_change``) read nothing, and what to do."""
    name = _project_name(store, run.project_id)
    what = "any project" if run.project_id is None else f"project {name}"
    scope = ReviewScope(run.project_id, name, run.time_from, run.time_to)
    span = store.scope_span(scope)
    if span.sources == 0:
        return (
            f"No sources in {what} yet: import some with `proctor ingest`, then review. "
            "No model call was made."
        )
    if span.in_range == 0 and span.oldest is not None and span.newest is not None:
        options = " and ".join(
            option
            for option, value in (("--since", run.time_from), ("--until", run.time_to))
            if value is not None
        )
        return (
            f"No sources of {what} {_window(run.time_from, run.time_to)} "
            f"({_dates(span.sources, span.oldest, span.newest)}); run without {options} to "
            "review all of it. No model call was made."
        )
    return f"Nothing new or changed since the last review of {what}: no model call was made."


def _project_name(store: SqlStore, project_id: str | None) -> str | None:
    if project_id is None:
        return None
    for project in store.projects():
        if project.project_id == project_id:
            return project.name
    return project_id


def _dates(count: int, oldest: datetime, newest: datetime) -> str:
    if count == 1:
        return f"its one source is from {_day(newest)}"
    if _day(oldest) == _day(newest):
        return f"its {count} sources are all from {_day(newest)}"
    return f"its {count} sources date from {_day(oldest)} to {_day(newest)}"


def _window(since: datetime | None, until: datetime | None) -> str:
    if since is not None and until is not None:
        return f"between {_moment(since)} and {_moment(until)}"
    if since is not None:
        return f"since {_moment(since)}"
    return f"before {_moment(until)}" if until is not None else "at all"


def _moment(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M %Z").strip()


def _day(value: datetime) -> str:
    return value.strftime("%Y-%m-%d")
