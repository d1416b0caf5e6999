"""Model-based evaluation fixtures: a scripted model that answers from a table the test controls."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from proctor.testing.scripted_model import ScriptedModelServer, ScriptedReply
from tests.evals.judge_data import write_five_runs, write_six_records
from tests.evals.scripted_judge import AnswerTable


@pytest.fixture
def answering() -> Iterator[Any]:
    """``answering(table)`` starts a scripted server that answers from ``table``."""
    servers: list[ScriptedModelServer] = []

    def start(table: Mapping[int, Sequence[ScriptedReply | dict[str, Any] | str]]) -> Any:
        server = ScriptedModelServer(responder=AnswerTable(table)).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def six_records(tmp_path: Path) -> Path:
    """An R-Judge folder: cases 1–3 unsafe, 4–6 safe; 1, 2, 4 in scenario web, 3, 5, 6 in bank."""
    return write_six_records(tmp_path / "r-judge")


@pytest.fixture
def five_runs(tmp_path: Path) -> Path:
    """A Who&When folder: cases 1–2 Hand-Crafted, 3–5 Algorithm-Generated."""
    return write_five_runs(tmp_path / "who-and-when")
