"""The main read routes (the conversations list, the findings page, the stories) answer in
the same few statements however many conversations the store holds: no statement per
row (issue 18: p95 <= 50 ms on a large store)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from proctor.review import ReviewRequest, start_review
from proctor.store import SqlStore, open_store
from proctor.supervision import check_conversations
from proctor.transcript import ToolCall
from tests.api.conftest import Api
from tests.search.helpers import T0, dialogue, write

ROUTES = ("/api/conversations", "/api/findings", "/api/stories?target=all")

TURNS = [
    ("user", "Please run the failing test again and fix the import error."),
    ("assistant", "The test fails: ModuleNotFoundError. I will delete the cache folder."),
    ("user", "Do not delete anything; read the config file first."),
    ("assistant", "Reading config.toml now. The database password is hunter2."),
]


@contextmanager
def _counted(store: SqlStore) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(_c: Any, _cursor: Any, sql: str, _p: Any, _ctx: Any, _many: bool) -> None:
        seen.append(sql)

    engines = {id(e): e for e in (store._reader, store._writer)}.values()
    for engine in engines:
        event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", record)


def _statements(database: Path, conversations: int) -> dict[str, int]:
    store = open_store(database)
    try:
        for n in range(conversations):
            calls = (
                ToolCall(
                    source_id=f"conv-{n}:call",
                    name="Bash",
                    arguments={"command": "rm -rf ~/ && git push --force origin main"},
                    status="error",
                    exit_code=1,
                    result_text="Error: permission denied",
                    created_at=T0 + timedelta(minutes=2),
                ),
            )
            bundle = dialogue(
                f"conv-{n}", TURNS, project=f"project-{n % 3}", title=f"Run {n}", calls=calls
            )
            write(store, bundle)
        check_conversations(store, [f"conv-{n}" for n in range(conversations)])
        store.set_setting("app.enabled", True)
        start_review(store, ReviewRequest(), semantic=None)  # the stories need a result
    finally:
        store.close()
    api = Api(database)
    try:
        for route in ROUTES:  # opens the store, warms what is read once per process
            assert api.get(route).status_code == 200
        store = api.app.state.store_holder.get()
        counts: dict[str, int] = {"findings": api.get("/api/findings").json()["total"]}
        for route in ROUTES:
            with _counted(store) as seen:
                response = api.get(route)
            assert response.status_code == 200, response.text
            counts[route] = len(seen)
        return counts
    finally:
        api.close()


@pytest.mark.slow
def test_the_main_read_routes_take_as_many_statements_for_thirty_conversations_as_for_two(
    tmp_path: Path,
) -> None:
    few = _statements(tmp_path / "few.db", 2)
    many = _statements(tmp_path / "many.db", 30)
    assert all(few[route] > 0 for route in ROUTES), few
    assert many["findings"] >= 30  # every conversation's risky call was found
    assert {r: many[r] for r in ROUTES} == {r: few[r] for r in ROUTES}
