"""The settings page's API: the supervisor app switch and changing the model pool limits."""

from __future__ import annotations

from proctor.heartbeat import app_enabled
from proctor.models import PoolLimits, pool_limits
from proctor.models._settings import POOL_LIMITS_KEY
from proctor.store import SqlStore
from tests.api.conftest import Api


def _store(api: Api) -> SqlStore:
    store: SqlStore = api.app.state.store_holder.get()
    return store


def test_the_app_switch_is_read_and_turned_off_and_on(api: Api) -> None:
    # The prepared store has the app enabled.
    assert api.get("/api/app").json() == {"enabled": True}

    off = api.call("PUT", "/api/app", json={"enabled": False})
    assert off.status_code == 200, off.text
    assert off.json() == {"enabled": False}
    assert api.get("/api/app").json() == {"enabled": False}
    assert app_enabled(_store(api)) is False
    assert api.get("/api/heartbeat").json()["app_enabled"] is False

    on = api.call("PUT", "/api/app", json={"enabled": True})
    assert on.json() == {"enabled": True}
    assert app_enabled(_store(api)) is True


def test_while_the_app_is_off_a_manual_review_is_refused(api: Api) -> None:
    api.call("PUT", "/api/app", json={"enabled": False})
    refused = api.post("/api/reviews", json={"use_model": False})
    assert refused.status_code == 409
    assert "disabled" in refused.json()["detail"]


def test_the_app_switch_refuses_anything_but_a_boolean(api: Api) -> None:
    for body in (
        {},
        {"enabled": "yes"},
        {"enabled": 1},
        {"enabled": None},
        {"enabled": True, "x": 1},
    ):
        answer = api.call("PUT", "/api/app", json=body)
        assert answer.status_code == 422, (body, answer.text)
    assert api.get("/api/app").json() == {"enabled": True}


def test_the_pool_limits_are_changed_and_kept(api: Api) -> None:
    changed = api.call(
        "PUT",
        "/api/model-pool",
        json={"concurrency": 3, "stage_timeout_s": 90, "capacity_kib": 2048},
    )
    assert changed.status_code == 200, changed.text
    expected = {"concurrency": 3, "stage_timeout_s": 90.0, "capacity_kib": 2048}
    assert changed.json() == expected
    assert api.get("/api/model-pool").json() == expected
    assert pool_limits(_store(api)) == PoolLimits(
        concurrency=3, stage_timeout_s=90, capacity_kib=2048
    )


def test_a_field_left_out_keeps_its_value(api: Api) -> None:
    api.call("PUT", "/api/model-pool", json={"concurrency": 2, "capacity_kib": 4096})
    changed = api.call("PUT", "/api/model-pool", json={"stage_timeout_s": 45.5})
    assert changed.json() == {"concurrency": 2, "stage_timeout_s": 45.5, "capacity_kib": 4096}
    assert api.call("PUT", "/api/model-pool", json={}).json() == changed.json()


def test_an_out_of_range_limit_is_refused_with_a_sentence_and_nothing_is_stored(api: Api) -> None:
    before = api.get("/api/model-pool").json()
    for field, value, sentence in (
        ("concurrency", 5, "must be a whole number from 1 to 4 (calls at once), not 5"),
        ("concurrency", 0, "not 0"),
        ("stage_timeout_s", 29.9, "must be a number of seconds from 30 to 600, not 29.9"),
        ("stage_timeout_s", 601, "from 30 to 600"),
        ("capacity_kib", 99, "must be a whole number of KiB from 100 to 16384, not 99"),
        ("capacity_kib", "lots", "not 'lots'"),
        ("concurrency", 2.5, "from 1 to 4"),
    ):
        # A valid field beside the invalid one is not stored either.
        body = {"concurrency": 4, field: value} if field != "concurrency" else {field: value}
        answer = api.call("PUT", "/api/model-pool", json=body)
        assert answer.status_code == 422, (field, value, answer.text)
        problems = answer.json()["detail"]
        assert [p["loc"] for p in problems] == [["body", field]]
        assert sentence in problems[0]["msg"]
    assert api.call("PUT", "/api/model-pool", json={"workers": 2}).status_code == 422
    assert api.get("/api/model-pool").json() == before


def test_stored_limits_that_no_longer_validate_are_replaced_by_a_change(api: Api) -> None:
    _store(api).set_setting(POOL_LIMITS_KEY, {"concurrency": 99})
    assert api.get("/api/model-pool").status_code == 400
    fixed = api.call("PUT", "/api/model-pool", json={"concurrency": 2})
    assert fixed.json() == {"concurrency": 2, "stage_timeout_s": 240.0, "capacity_kib": 1024}
    assert api.get("/api/model-pool").json() == fixed.json()
