"""Wire documents of the routes a server answers first: health, projects, and the page every
list's page derives from (kept apart from ``_models``, which imports search and the graph's
views, so answering them imports neither)."""

from __future__ import annotations

from typing import Literal

from proctor.api._base_models import WireModel
from proctor.store import ProjectSummary


class Health(WireModel):
    """The server answers."""

    status: Literal["ok"] = "ok"
    """Always ``ok``."""
    version: str
    """Proctor's version."""


class Page(WireModel):
    """Where a page sits in its list."""

    limit: int
    """The page size asked for."""
    offset: int
    """How many items were skipped."""


class ProjectList(WireModel):
    """Every project."""

    projects: list[ProjectSummary]
    """Projects with their conversation counts."""
