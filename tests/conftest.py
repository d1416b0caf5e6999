"""Shared fixtures: an isolated PROCTOR_HOME per test and the ../shared data folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = Path(os.environ.get("PROCTOR_SHARED_DIR", REPO_ROOT.parent / "shared"))
TRANSCRIPTS_DIR = SHARED_DIR / "transcripts"
DATASETS_DIR = SHARED_DIR / "datasets"
EXAMPLES_DIR = REPO_ROOT / "examples"


@pytest.fixture(autouse=True)
def proctor_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own PROCTOR_HOME and cannot reach a real model endpoint."""
    home = tmp_path / "proctor-home"
    monkeypatch.setenv("PROCTOR_HOME", str(home))
    monkeypatch.setenv("PROCTOR_ALLOW_MODEL_REQUESTS", "0")
    return home


@pytest.fixture(scope="session")
def transcripts_dir() -> Path:
    """``../shared/transcripts``: real transcript files for adapter tests."""
    if not TRANSCRIPTS_DIR.is_dir():
        pytest.skip(f"{TRANSCRIPTS_DIR} is not available (set PROCTOR_SHARED_DIR)")
    return TRANSCRIPTS_DIR


@pytest.fixture(scope="session")
def datasets_dir() -> Path:
    """``../shared/datasets``: benchmark development splits."""
    if not DATASETS_DIR.is_dir():
        pytest.skip(f"{DATASETS_DIR} is not available (set PROCTOR_SHARED_DIR)")
    return DATASETS_DIR


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``shared`` read ../shared directly; without it they skip, not fail."""
    if SHARED_DIR.is_dir():
        return
    skip = pytest.mark.skip(reason=f"{SHARED_DIR} is not available (set PROCTOR_SHARED_DIR)")
    for item in items:
        if item.get_closest_marker("shared") is not None:
            item.add_marker(skip)
