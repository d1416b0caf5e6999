"""``proctor app``, ``proctor plans``, ``proctor worker`` and ``proctor activity`` (SPEC HB-1…3, HB-7)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from proctor.cli.main import cli
from tests.conftest import EXAMPLES_DIR


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_the_app_is_disabled_until_enabled_and_says_how_to_turn_it_on() -> None:
    code, output = _invoke("app", "status")
    assert code == 0 and "disabled" in output and "proctor app enable" in output

    assert _invoke("app", "enable")[0] == 0
    assert json.loads(_invoke("app", "status", "--json")[1])["enabled"] is True
    assert _invoke("app", "disable")[0] == 0
    assert json.loads(_invoke("app", "status", "--json")[1])["enabled"] is False


def test_a_plan_is_added_listed_edited_and_removed() -> None:
    code, output = _invoke(
        "plans", "add", "morning", "--weekly", "mon,thu@09:00", "--timezone", "Europe/Berlin",
        "--window", "24h", "--intervention", "memory_only",
    )  # fmt: skip
    assert code == 0, output
    assert "weekly mon,thu 09:00 Europe/Berlin" in output and "next run" in output

    (plan,) = json.loads(_invoke("plans", "list", "--json")[1])
    assert (plan["name"], plan["weekdays"], plan["window_hours"]) == ("morning", [0, 3], 24)
    assert plan["next_run_local"].endswith(("CET", "CEST"))
    code, output = _invoke("plans", "list")
    assert code == 0 and "morning" in output and "UTC" in output

    assert _invoke("plans", "disable", "morning")[0] == 0
    code, output = _invoke("plans", "edit", "morning", "--daily", "07:30", "--no-window")
    assert code == 0, output
    (plan,) = json.loads(_invoke("plans", "list", "--json")[1])
    assert (plan["recurrence"], plan["time_of_day"], plan["weekdays"]) == ("daily", "07:30", [])
    assert (plan["enabled"], plan["timezone"], plan["window_hours"]) == (
        False,
        "Europe/Berlin",
        None,
    )
    assert _invoke("plans", "enable", "morning")[0] == 0
    assert json.loads(_invoke("plans", "list", "--json")[1])[0]["enabled"] is True

    assert _invoke("plans", "remove", "morning")[0] == 0
    assert json.loads(_invoke("plans", "list", "--json")[1]) == []


def test_a_bad_plan_is_refused_naming_the_field_with_exit_status_2() -> None:
    code, output = _invoke("plans", "add", "p", "--daily", "25:00", "--timezone", "UTC")
    assert code == 2 and "time: must be HH:MM" in output

    code, output = _invoke("plans", "add", "p", "--daily", "09:00", "--timezone", "Nowhere/X")
    assert code == 2 and "not an IANA timezone" in output

    code, output = _invoke("plans", "add", "p", "--timezone", "UTC")
    assert code == 2 and "--daily HH:MM or --weekly" in output

    code, output = _invoke("plans", "add", "p", "--weekly", "mon", "--timezone", "UTC")
    assert code == 2 and "mon,thu@09:00" in output

    code, output = _invoke("plans", "add", "p", "--daily", "09:00", "--window", "90m")
    assert code == 2 and "whole hours" in output
    assert json.loads(_invoke("plans", "list", "--json")[1]) == []


def test_run_now_is_refused_while_the_app_is_disabled() -> None:
    _invoke("plans", "add", "morning", "--daily", "09:00", "--timezone", "UTC")

    code, output = _invoke("plans", "run-now", "morning")

    assert code == 2 and "proctor app enable" in output
    assert json.loads(_invoke("activity", "--json")[1]) == []


def test_run_now_reviews_and_activity_shows_it_then_no_change() -> None:
    _invoke("ingest", str(EXAMPLES_DIR))
    _invoke("app", "enable")
    _invoke("plans", "add", "morning", "--daily", "09:00", "--timezone", "UTC", "--intervention",
            "memory_only")  # fmt: skip

    code, output = _invoke("plans", "run-now", "morning", "--no-model")
    assert code == 0, output
    assert "plan morning · updated" in output
    code, output = _invoke("plans", "run-now", "morning", "--no-model", "--json")
    assert code == 0 and json.loads(output)["status"] == "no_change"

    entries = json.loads(_invoke("activity", "--plan", "morning", "--json")[1])
    assert [e["outcome"] for e in entries] == ["no change (no model call)", "updated"]
    assert entries[1]["summary"] and entries[1]["result_id"]
    assert [
        e["outcome"] for e in json.loads(_invoke("activity", "--offset", "1", "--json")[1])
    ] == ["updated"]
    code, output = _invoke("activity")
    assert code == 0 and "no change (no model call)" in output


def test_activity_refuses_a_limit_out_of_range_and_an_unknown_plan() -> None:
    code, output = _invoke("activity")
    assert code == 1 and "proctor init" in output  # no database yet: nothing is created
    _invoke("plans", "list")
    assert _invoke("activity", "--limit", "101")[0] == 2
    assert _invoke("activity", "--offset", "100001")[0] == 2
    code, output = _invoke("activity", "--plan", "nope")
    assert code == 2 and "no plan 'nope'" in output


def test_the_worker_once_runs_nothing_while_disabled_and_nothing_when_not_due() -> None:
    code, output = _invoke("worker", "--once")
    assert code == 0 and "disabled" in output

    _invoke("app", "enable")
    code, output = _invoke("worker", "--once")
    assert code == 0 and "No plan was due" in output
