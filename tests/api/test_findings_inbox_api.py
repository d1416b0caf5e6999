"""The findings inbox over HTTP (issue 17): filters, groups, sorts and true totals over every
conversation, bulk triage with one exact undo, and the conversations list's open findings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.store import open_store
from tests.api.conftest import Api
from tests.backends import copy_database
from tests.inbox_world import fill_store

CONVERSATIONS = 21
CALLS = 9
"""Per conversation: 9 destructive calls, one failing loop and one monologue: 11 findings."""
TOTAL = CONVERSATIONS * (CALLS + 2)


@pytest.fixture(scope="module")
def inbox_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("inbox-api")
    path = folder / "proctor.db"
    store = open_store(path)
    try:
        fill_store(store, folder / "transcripts", conversations=CONVERSATIONS, calls=CALLS)
    finally:
        store.close()
    return path


@pytest.fixture
def api(inbox_database: Path, proctor_home: Path) -> Iterator[Api]:
    copy = proctor_home / "proctor.db"
    copy_database(inbox_database, copy, unchanging=True)
    client = Api(copy)
    try:
        yield client
    finally:
        client.close()


def _ids(api: Api, **params: object) -> list[str]:
    """Every finding id the filters match, read a page of 100 at a time."""
    ids: list[str] = []
    while True:
        page = api.get("/api/findings", params={**params, "limit": 100, "offset": len(ids)})
        assert page.status_code == 200, page.text
        body = page.json()
        ids += [f["finding_id"] for f in body["findings"]]
        if len(ids) >= body["total"] or not body["findings"]:
            assert len(ids) == body["total"]
            return ids


def test_the_inbox_pages_through_every_finding_with_the_true_total(api: Api) -> None:
    first = api.get("/api/findings", params={"limit": 50}).json()
    assert first["total"] == TOTAL > 100
    everything = _ids(api)
    assert len(set(everything)) == TOTAL
    # Each page names its findings' conversations with their titles and projects.
    labels = first["conversations"]
    assert {f["conversation_id"] for f in first["findings"]} == set(labels)
    assert all(label["title"].startswith("Maintenance run") for label in labels.values())
    assert {label["project"] for label in labels.values()} <= {"billing", "search", "infra"}


def test_filters_combine_and_old_parameters_still_work(api: Api) -> None:
    everything = {
        f["finding_id"]: f
        for offset in range(0, TOTAL, 100)
        for f in api.get("/api/findings", params={"limit": 100, "offset": offset}).json()[
            "findings"
        ]
    }
    loops = _ids(api, rule="repeated_action_error")
    assert len(loops) == CONVERSATIONS
    two_rules = _ids(api, rule=["repeated_action_error", "monologue"])
    assert len(two_rules) == 2 * CONVERSATIONS
    billing = _ids(api, project="billing", severity="medium")
    assert billing and all(everything[i]["severity"] == "medium" for i in billing)
    assert len(_ids(api, q="PUSH --force")) == len(
        [f for f in everything.values() if "git push --force" in f["title"]]
    )
    assert _ids(api, origin="model") == []
    conversation = next(iter(everything.values()))["conversation_id"]
    assert len(_ids(api, conversation=conversation[:16])) == CALLS + 2
    created = sorted(f["created_at"] for f in everything.values())
    assert len(_ids(api, since=created[0])) == TOTAL
    assert _ids(api, until=created[0]) == []
    assert api.get("/api/findings", params={"sort": "size"}).status_code == 422
    assert api.get("/api/findings", params={"origin": "human"}).status_code == 422
    assert api.get("/api/findings", params={"since": "yesterday"}).status_code == 422


@pytest.mark.parametrize("sort", ["severity", "created", "rule", "conversation"])
def test_each_sort_orders_the_whole_list_both_ways(api: Api, sort: str) -> None:
    def values(order: str) -> list[object]:
        rows = []
        for offset in range(0, TOTAL, 100):
            page = api.get(
                "/api/findings",
                params={"sort": sort, "order": order, "limit": 100, "offset": offset},
            ).json()
            rows += page["findings"]
        rank = {"info": 0, "low": 1, "medium": 2, "high": 3}
        field = {"severity": "severity", "created": "created_at", "rule": "rule"}.get(
            sort, "conversation_id"
        )
        return [rank[r[field]] if sort == "severity" else r[field] for r in rows]

    descending, ascending = values("desc"), values("asc")
    assert descending == sorted(descending, reverse=True)  # type: ignore[type-var]
    assert ascending == sorted(ascending)  # type: ignore[type-var]
    assert len(descending) == len(ascending) == TOTAL


def test_groups_by_rule_and_by_conversation_count_what_the_filters_match(api: Api) -> None:
    by_rule = api.get("/api/findings/groups", params={"by": "rule"}).json()
    counts = {g["key"]: g["count"] for g in by_rule["groups"]}
    assert counts["repeated_action_error"] == CONVERSATIONS
    assert counts["monologue"] == CONVERSATIONS
    assert sum(counts.values()) == TOTAL and by_rule["total"] == len(counts)
    by_conversation = api.get(
        "/api/findings/groups", params={"by": "conversation", "limit": 10, "offset": 20}
    ).json()
    assert by_conversation["total"] == CONVERSATIONS and len(by_conversation["groups"]) == 1
    group = by_conversation["groups"][0]
    assert group["label"].startswith("Maintenance run") and group["project"]
    assert group["count"] == group["open"] == CALLS + 2
    # A group's findings are the list filtered by its key.
    assert len(_ids(api, conversation=group["key"])) == group["count"]
    narrowed = api.get("/api/findings/groups", params={"by": "rule", "rule": "monologue"}).json()
    assert [g["key"] for g in narrowed["groups"]] == ["monologue"]


def test_a_bulk_dismiss_of_fifty_findings_then_undo_restores_them(api: Api) -> None:
    page = api.get("/api/findings", params={"limit": 50, "sort": "created"}).json()
    chosen = [f["finding_id"] for f in page["findings"]]
    first = chosen[0]
    assert api.post(f"/api/findings/{first}/status", json={"action": "ack"}).status_code == 200

    done = api.post("/api/findings/bulk", json={"ids": chosen, "action": "dismiss"})

    assert done.status_code == 200, done.text
    change = done.json()
    assert (change["changed"], change["unchanged"], change["status"]) == (50, 0, "dismissed")
    assert set(_ids(api, status="dismissed")) == set(chosen)
    assert len(_ids(api, status="open")) == TOTAL - 50

    undone = api.post(f"/api/findings/bulk/{change['change_id']}/undo")

    assert undone.status_code == 200, undone.text
    assert undone.json()["restored"] == 50
    assert _ids(api, status="dismissed") == []
    assert _ids(api, status="acknowledged") == [first]
    again = api.post(f"/api/findings/bulk/{change['change_id']}/undo")
    assert again.status_code == 409 and "already undone" in again.json()["detail"]


def test_a_bulk_change_by_filter_and_an_undo_refused_after_a_later_change(api: Api) -> None:
    done = api.post(
        "/api/findings/bulk",
        json={"filter": {"rule": ["monologue"], "status": ["open"]}, "action": "false_positive"},
    ).json()
    assert done["changed"] == CONVERSATIONS
    one = _ids(api, rule="monologue")[0]
    assert api.post(f"/api/findings/{one}/status", json={"action": "reopen"}).status_code == 200

    refused = api.post(f"/api/findings/bulk/{done['change_id']}/undo")

    assert refused.status_code == 409
    assert "1 of the 21 findings changed status since" in refused.json()["detail"]
    assert len(_ids(api, rule="monologue", status="false_positive")) == CONVERSATIONS - 1


def test_bad_bulk_requests_are_refused_naming_the_problem(api: Api) -> None:
    neither = api.post("/api/findings/bulk", json={"action": "dismiss"})
    assert neither.status_code == 422 and "either ids" in neither.text
    both = api.post("/api/findings/bulk", json={"action": "dismiss", "ids": ["x"], "filter": {}})
    assert both.status_code == 422
    assert (
        api.post("/api/findings/bulk", json={"ids": ["x"], "action": "reopen"}).status_code == 422
    )
    assert api.post("/api/findings/bulk", json={"ids": [], "action": "ack"}).status_code == 422
    unknown = api.post("/api/findings/bulk", json={"ids": ["nope"], "action": "ack"}).json()
    assert (unknown["change_id"], unknown["changed"], unknown["unchanged"]) == (None, 0, 0)
    assert api.post(f"/api/findings/bulk/{'0' * 32}/undo").status_code == 404


def test_the_conversations_list_counts_open_findings_and_sorts_and_filters_by_them(
    api: Api,
) -> None:
    rows = api.get("/api/conversations", params={"limit": 100}).json()["conversations"]
    assert len(rows) == CONVERSATIONS
    assert all(r["open_findings"] == CALLS + 2 and r["top_severity"] == "high" for r in rows)
    quiet = rows[3]["conversation"]["conversation_id"]
    api.post(
        "/api/findings/bulk",
        json={"filter": {"conversation": quiet}, "action": "resolve"},
    )
    calmer = rows[5]["conversation"]["conversation_id"]
    api.post(
        "/api/findings/bulk",
        json={"filter": {"conversation": calmer, "severity": ["high"]}, "action": "dismiss"},
    )
    ordered = api.get(
        "/api/conversations", params={"sort": "open_findings", "order": "asc", "limit": 2}
    ).json()
    assert ordered["total"] == CONVERSATIONS
    assert [r["conversation"]["conversation_id"] for r in ordered["conversations"]] == [
        quiet,
        calmer,
    ]
    assert ordered["conversations"][0]["top_severity"] is None
    assert ordered["conversations"][1]["top_severity"] == "medium"
    high = api.get(
        "/api/conversations", params={"has_open": "true", "min_severity": "high", "limit": 100}
    ).json()
    assert high["total"] == CONVERSATIONS - 2
    none = api.get("/api/conversations", params={"has_open": "false"}).json()
    assert [r["conversation"]["conversation_id"] for r in none["conversations"]] == [quiet]
    assert api.get("/api/conversations", params={"sort": "loudest"}).status_code == 422


def test_around_returns_the_page_holding_a_finding(api: Api) -> None:
    conversation = api.get("/api/findings", params={"limit": 1}).json()["findings"][0][
        "conversation_id"
    ]
    mine = api.get(
        "/api/findings", params={"conversation": conversation, "limit": 4, "offset": 0}
    ).json()
    last_page = api.get(
        "/api/findings", params={"conversation": conversation, "limit": 4, "offset": 8}
    ).json()
    target = last_page["findings"][-1]["finding_id"]
    found = api.get(
        "/api/findings",
        params={"conversation": conversation, "limit": 4, "around": target[:14]},
    ).json()
    assert found["offset"] == 8 and found["total"] == mine["total"] == CALLS + 2
    assert target in [f["finding_id"] for f in found["findings"]]
    # A finding the filters leave out: the page asked for. (The last finding may be the
    # monologue or a loop, depending on how ties in the sort fall, so filter by another rule.)
    target_rule = last_page["findings"][-1]["rule"]
    left_out = "repeated_action_error" if target_rule == "monologue" else "monologue"
    other = api.get(
        "/api/findings", params={"rule": left_out, "limit": 4, "offset": 4, "around": target}
    ).json()
    assert other["offset"] == 4
    assert api.get("/api/findings", params={"around": "no-such-finding"}).status_code == 404
