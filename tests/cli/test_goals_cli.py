"""``proctor goals`` and goal tracking in ``proctor check`` (GOAL-1, GOAL-2), no model configured.

Real Claude Code session files whose user re-goals in many phrasings are imported and
checked; the goal versions and intent labels the lexical classifier records are read
back through ``proctor goals`` (text and JSON) and ``GET /api/conversations/{id}/goals``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from proctor.cli.main import cli
from tests.api.conftest import Api
from tests.supervision.goal_transcripts import CHATTER, FIRST_REQUEST, RE_GOALS, Turn, write_session


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def goals(session: str) -> dict[str, Any]:
    result = run("goals", session, "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


def _ingest_and_check(folder: Path) -> dict[str, Any]:
    assert run("ingest", str(folder)).exit_code == 0
    checked = run("check", "--all", "--json")
    assert checked.exit_code == 0, checked.output
    data: dict[str, Any] = json.loads(checked.output)
    return data


@pytest.mark.parametrize(
    "turn", RE_GOALS, ids=[t.intent + "-" + str(i) for i, t in enumerate(RE_GOALS)]
)
def test_check_records_the_goal_and_its_change_without_a_model_and_goals_shows_them(
    tmp_path: Path, proctor_home: Path, turn: Turn
) -> None:
    write_session(tmp_path / "sessions", "s-regoal", [CHATTER[0].text, turn.text])
    _ingest_and_check(tmp_path / "sessions")

    data = goals("s-regoal")

    first, chatter, regoal = data["turns"]
    assert [t["intent"]["intent"] for t in data["turns"]] == ["new_goal", "continue", turn.intent]
    assert first["intent"]["confidence"] == 1.0 and first["set_version"] == 1
    assert chatter["intent"] == {
        "intent": "continue",
        "confidence": 0.3,
        "low_confidence": True,
        "goal_version": 1,
        "classifier": "lexical",
    }
    assert chatter["set_version"] is None
    assert regoal["intent"]["low_confidence"] is False and regoal["intent"]["goal_version"] == 1
    assert [(v["version"], v["reason"]) for v in data["versions"]] == [
        (1, "initial"),
        (2, turn.intent),
    ]
    assert data["versions"][0]["goal"] == FIRST_REQUEST
    assert data["versions"][0]["source_id"] == first["source_id"]
    assert data["versions"][1]["source_id"] == regoal["source_id"] and regoal["set_version"] == 2
    assert data["current"] == data["versions"][1]
    assert len(data["current"]["goal_hash"]) == 32
    assert data["current"]["closed"] is (turn.intent == "cancel")
    if turn.intent == "new_goal":
        assert FIRST_REQUEST not in data["current"]["goal"]
    elif turn.intent != "cancel":
        assert data["current"]["goal"].startswith(FIRST_REQUEST)


def test_a_goal_version_dates_from_the_user_turn_that_set_it_not_from_the_check(
    tmp_path: Path, proctor_home: Path
) -> None:
    write_session(tmp_path / "sessions", "s-dated", [CHATTER[0].text, RE_GOALS[0].text])
    _ingest_and_check(tmp_path / "sessions")

    data = goals("s-dated")

    assert [v["created_at"][:16] for v in data["versions"]] == [
        t["created_at"][:16] for t in data["turns"] if t["set_version"] is not None
    ]
    assert all(v["created_at"].startswith("2026-02-17T09:") for v in data["versions"])


def test_checking_again_records_no_version_or_label_twice(
    tmp_path: Path, proctor_home: Path
) -> None:
    write_session(
        tmp_path / "sessions", "s-twice", [RE_GOALS[4].text, CHATTER[1].text, RE_GOALS[0].text]
    )
    _ingest_and_check(tmp_path / "sessions")
    before = goals("s-twice")

    again = run("check", "--all", "--json")

    assert again.exit_code == 0
    after = goals("s-twice")
    assert after["versions"] == before["versions"] and after["turns"] == before["turns"]
    assert [v["reason"] for v in after["versions"]] == ["initial", "correct", "new_goal"]


def test_a_conversation_that_grows_gets_the_new_turns_labelled_on_the_next_check(
    tmp_path: Path, proctor_home: Path
) -> None:
    write_session(tmp_path / "sessions", "s-grows", [CHATTER[0].text])
    _ingest_and_check(tmp_path / "sessions")
    assert [v["version"] for v in goals("s-grows")["versions"]] == [1]

    write_session(tmp_path / "sessions", "s-grows", [CHATTER[0].text, RE_GOALS[6].text])
    _ingest_and_check(tmp_path / "sessions")

    data = goals("s-grows")
    assert [(v["version"], v["reason"]) for v in data["versions"]] == [
        (1, "initial"),
        (2, "expand"),
    ]
    assert len(data["turns"]) == 3 and all(t["intent"] is not None for t in data["turns"])


def test_goals_in_the_terminal_show_the_current_goal_history_and_low_confidence(
    tmp_path: Path, proctor_home: Path
) -> None:
    write_session(tmp_path / "sessions", "s-text", [CHATTER[0].text, RE_GOALS[1].text])
    _ingest_and_check(tmp_path / "sessions")

    shown = run("goals", "s-text")

    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    assert "Current (v2): Switching gears — draft the release notes" in text
    assert "v1 initial" in text and "v2 new_goal" in text
    assert "continue 0.30 low confidence (lexical)" in text
    assert "Goal findings (0)" in text


def test_goals_of_an_unknown_conversation_is_a_usage_error(
    tmp_path: Path, proctor_home: Path
) -> None:
    write_session(tmp_path / "sessions", "s-known", [])
    _ingest_and_check(tmp_path / "sessions")
    result = CliRunner().invoke(cli, ["goals", "nothing-like-this"])
    assert result.exit_code == 2 and "nothing-like-this" in result.output


def test_the_api_lists_the_same_goal_as_the_cli(tmp_path: Path, proctor_home: Path) -> None:
    write_session(tmp_path / "sessions", "s-api", [RE_GOALS[8].text, CHATTER[0].text])
    _ingest_and_check(tmp_path / "sessions")
    cli_view = goals("s-api")

    answer = Api(proctor_home / "proctor.db").get("/api/conversations/s-api/goals")

    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["conversation_id"] == cli_view["conversation_id"]
    assert [(v["version"], v["reason"], v["goal_hash"]) for v in body["versions"]] == [
        (v["version"], v["reason"], v["goal_hash"]) for v in cli_view["versions"]
    ]
    assert [t["intent"] for t in body["turns"]] == [t["intent"] for t in cli_view["turns"]]
    assert body["turns"][2]["intent"]["low_confidence"] is True
    assert Api(proctor_home / "proctor.db").get("/api/conversations/nope/goals").status_code == 404
