"""``proctor review``: run, list, status, pause, resume and cancel from the terminal."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner
from sqlalchemy import insert

from proctor.cli.main import cli
from proctor.store import ReviewScope, open_store
from proctor.store import _schema as t
from tests.conftest import EXAMPLES_DIR


@pytest.fixture(autouse=True)
def app_enabled() -> None:
    store = open_store()
    try:
        store.set_setting("app.enabled", True)
    finally:
        store.close()


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_a_review_run_publishes_the_structural_graph_and_says_how_to_browse_it() -> None:
    assert _invoke("ingest", str(EXAMPLES_DIR))[0] == 0
    code, output = _invoke("review", "run")
    assert code == 0, output
    assert "completed" in output
    assert "model calls 0" in output
    assert "semantic layer skipped: no model connection is configured" in output
    assert "Browse it: proctor graph show" in output
    code, output = _invoke("review", "run")
    assert code == 0, output
    assert "no_change" in output
    assert "Nothing new or changed since the last review" in output
    code, output = _invoke("review", "list", "--json")
    runs = json.loads(output)
    assert [r["status"] for r in runs] == ["no_change", "completed"]
    code, output = _invoke("review", "status", runs[1]["run_id"][:8], "--json")
    assert json.loads(output)["sources_done"] == runs[1]["sources_total"] > 0


def test_a_finished_run_cannot_be_paused_or_resumed() -> None:
    _invoke("ingest", str(EXAMPLES_DIR))
    _invoke("review", "run", "--no-model")
    (run,) = json.loads(_invoke("review", "list", "--json")[1])
    code, output = _invoke("review", "pause", run["run_id"][:8])
    assert code == 1
    assert "completed" in output
    code, output = _invoke("review", "resume", run["run_id"][:8])
    assert code == 1
    assert "already published" in output


def test_a_busy_slot_refuses_a_manual_review_with_exit_status_2() -> None:
    _invoke("ingest", str(EXAMPLES_DIR))
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    store = open_store()
    try:
        other = store.create_review_run(
            ReviewScope(None, None),
            trigger="scheduled",
            reanalyze=False,
            stages=["structural"],
            batch_size=10,
            batch_chars=10_000,
            connection=None,
            model=None,
        )
        with store._write() as conn:
            conn.execute(
                insert(t.review_slot).values(
                    slot=1, run_id=other.run_id, owner=f"{os.uname().nodename}:{holder.pid}"
                )
            )
        code, output = _invoke("review", "run")
        assert code == 2
        assert "BUSY" in output
    finally:
        holder.kill()
        holder.wait()
        store.close()


def test_a_bad_time_is_refused_with_the_expected_forms() -> None:
    code, output = _invoke("review", "run", "--since", "last tuesday")
    assert code == 2
    assert "24h or 7d" in output


def test_a_manual_review_is_refused_while_the_app_is_disabled() -> None:
    store = open_store()
    try:
        store.set_setting("app.enabled", False)
    finally:
        store.close()
    _invoke("ingest", str(EXAMPLES_DIR))
    code, output = _invoke("review", "run")
    assert code == 2
    assert "proctor app enable" in output
    assert json.loads(_invoke("review", "list", "--json")[1]) == []


def _review(*args: str) -> dict[str, object]:
    code, output = _invoke("review", "run", *args, "--json")
    assert code == 0, output
    run: dict[str, object] = json.loads(output)
    return run


def test_an_empty_time_window_is_told_apart_from_nothing_new_since_the_last_review() -> None:
    assert _invoke("ingest", str(EXAMPLES_DIR))[0] == 0
    future = "2030-01-01T00:00+00:00"
    code, output = _invoke("review", "run", "--project", "ledger-sync", "--since", future)
    assert code == 0, output
    assert "no_change" in output and "Nothing new" not in output
    assert re.search(
        r"No sources of project ledger-sync since 2030-01-01 00:00 UTC \(its \d+ sources are "
        r"all from 2026-11-24\); run without --since to review all of it\.",
        output,
    ), output
    window = _review("--project", "ledger-sync", "--since", "2026-11-25", "--until", "2026-12-01")
    assert (window["status"], window["sources_total"]) == ("no_change", 0)
    assert "between 2026-11-25" in str(window["note"])
    assert "run without --since and --until" in str(window["note"])
    everywhere = _review("--until", "2020-01-01T00:00+00:00")
    assert str(everywhere["note"]).startswith("No sources of any project before 2020-01-01")
    assert _review("--project", "ledger-sync")["status"] == "completed"
    again = _review("--project", "ledger-sync")
    assert again["note"] == (
        "Nothing new or changed since the last review of project ledger-sync: "
        "no model call was made."
    )
    # already reviewed, but the window is what leaves nothing to read
    later = _review("--project", "ledger-sync", "--since", future, "--reanalyze")
    assert str(later["note"]).startswith("No sources of project ledger-sync since 2030")


def test_a_project_whose_conversations_were_deleted_says_it_holds_no_sources() -> None:
    assert _invoke("ingest", str(EXAMPLES_DIR))[0] == 0
    listed = json.loads(_invoke("conversations", "list", "--project", "ledger-sync", "--json")[1])
    for item in listed["items"]:
        assert _invoke("conversations", "delete", item["conversation_id"], "--yes")[0] == 0
    emptied = _review("--project", "ledger-sync", "--since", "7d")
    assert emptied["note"] == (
        "No sources in project ledger-sync yet: import some with `proctor ingest`, then review. "
        "No model call was made."
    )
    code, output = _invoke("review", "status")
    assert code == 0 and "No sources in project ledger-sync yet" in output
