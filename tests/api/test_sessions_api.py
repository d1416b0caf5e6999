"""Live supervision sessions over HTTP: list, show, enable, disable (SPEC SUP-1, SUP-2)."""

from __future__ import annotations

from tests.api.conftest import Api


def _conversation(api: Api) -> str:
    conversation_id: str = api.get("/api/conversations").json()["conversations"][0]["conversation"][
        "conversation_id"
    ]
    return conversation_id


def test_supervision_is_off_until_a_target_is_enabled(api: Api) -> None:
    target = _conversation(api)
    page = api.get("/api/sessions").json()
    assert page["total"] == 0 and page["sessions"] == []
    assert page["connection"] is None and page["connection_error"]
    missing = api.get(f"/api/sessions/{target}")
    assert missing.status_code == 404 and "not supervised" in missing.json()["detail"]


def test_a_target_is_enabled_with_settings_shown_and_disabled(api: Api) -> None:
    target = _conversation(api)
    enabled = api.post(
        f"/api/sessions/{target[:12]}/enable",
        json={"mode": "risk", "every_n_steps": 5, "throttle_seconds": 10, "budget_calls": 3},
    )
    assert enabled.status_code == 200, enabled.text
    body = enabled.json()
    assert body["label"] == target and body["state"] == "active"
    session = body["session"]
    assert (session["mode"], session["triggers"], session["every_n_steps"]) == (
        "risk",
        ["every_n_steps"],
        5,
    )
    assert session["budget_calls"] == 3 and session["pending"] is False
    assert body["last_run"] is None and body["usage"] == {"calls": 0, "tokens": 0}

    listed = api.get("/api/sessions").json()
    assert listed["total"] == 1 and listed["sessions"][0]["label"] == target
    assert api.get(f"/api/sessions/{target}").json()["session"]["mode"] == "risk"

    disabled = api.post(f"/api/sessions/{target}/disable").json()
    assert disabled["state"] == "disabled" and disabled["session"]["enabled"] is False
    assert api.get("/api/sessions", params={"enabled_only": True}).json()["total"] == 0
    assert api.get("/api/sessions").json()["total"] == 1  # kept, with its runs


def test_session_settings_are_validated(api: Api) -> None:
    target = _conversation(api)
    url = f"/api/sessions/{target}/enable"
    for body in (
        {"mode": "paranoid"},
        {"triggers": ["sometimes"]},
        {"throttle_seconds": -1},
        {"budget_period_seconds": 5},
        {"colour": "red"},
    ):
        assert api.post(url, json=body).status_code == 422, body
    manual_and_more = api.post(url, json={"triggers": ["manual", "after_reply"]})
    assert 400 <= manual_and_more.status_code < 500
    assert "manual" in manual_and_more.json()["detail"]
    every_without_n = api.post(url, json={"triggers": ["every_n_steps"]})
    assert 400 <= every_without_n.status_code < 500
    assert api.get("/api/sessions").json()["total"] == 0


def test_unknown_targets_are_refused(api: Api) -> None:
    assert api.post("/api/sessions/zzzz-none/enable", json={}).status_code == 404
    assert api.post("/api/sessions/zzzz-none/disable").status_code == 404
    refused = api.post(f"/api/sessions/{_conversation(api)}/disable")
    assert 400 <= refused.status_code < 500 and "not supervised" in refused.json()["detail"]
    automation = api.post("/api/sessions/run:abc/enable", json={})
    assert 400 <= automation.status_code < 500 and "automation run" in automation.json()["detail"]
