"""The findings inbox in the store on every backend: filters, groups, sorts and true totals
over all conversations; bulk status changes with an exact undo; open-finding counts in the
conversations list (issue 17, SPEC SUP-8)."""

from __future__ import annotations

import dataclasses
import itertools
from datetime import UTC, datetime, timedelta

import pytest

from proctor.errors import NotFoundError
from proctor.findings import Evidence, Finding, finding_key
from proctor.sources import prepare_bundle
from proctor.store import SqlStore
from proctor.store._findings import record_findings
from proctor.store._findings_inbox import FindingFilter, UndoRefusedError
from tests.builders import conversation_bundle

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
CONVERSATIONS = {"test:alpha-1": "alpha", "test:alpha-2": "alpha", "test:beta-1": "beta"}
RULES = ("destructive_command", "tool_loop", "budget")
SEVERITIES = ("info", "low", "medium", "high")


def _finding(conversation: str, n: int, *, rule: str, severity: str, origin: str) -> Finding:
    evidence = [Evidence(source_type="tool_call", source_id=f"{conversation}:call-1")]
    # Titles differ in letters: a key normalises numbers away.
    name = "abcdefghij"[n // 10] + "abcdefghij"[n % 10]
    title = f"{rule} finding {name} in {conversation.split(':')[1]}"
    return Finding(
        key=finding_key(rule, conversation, evidence, title),
        conversation_id=conversation,
        origin=origin,  # type: ignore[arg-type]
        rule=rule if origin == "rule" else "supervisor",
        rule_version=1,
        action="warn",
        category="risk",
        severity=severity,  # type: ignore[arg-type]
        title=title,
        content="the agent ran `rm -rf build/` twice" if n % 5 == 0 else "plain words",
        evidence=evidence,
    )


@pytest.fixture
def inbox(store: SqlStore) -> SqlStore:
    """Three conversations in two projects, 60 findings: every rule, severity and origin,
    created one minute apart (finding n at T0 + n minutes)."""
    for conversation, project in CONVERSATIONS.items():
        bundle = dataclasses.replace(
            conversation_bundle(conversation),
            conversation=dataclasses.replace(
                conversation_bundle(conversation).conversation, title=f"Work on {conversation}"
            ),
        )
        store.write_conversation(prepare_bundle(bundle), project=project)
    conversations = itertools.cycle(CONVERSATIONS)
    for n in range(60):
        finding = _finding(
            next(conversations),
            n,
            rule=RULES[n % 3],
            severity=SEVERITIES[n % 4],
            origin="model" if n % 10 == 9 else "rule",
        )
        with store._write() as c:
            record_findings(c, [finding], T0 + timedelta(minutes=n))
    return store


def _all(store: SqlStore, chosen: FindingFilter) -> list[Finding]:
    page = store.findings_page(chosen, limit=1000)
    assert page.total == len(page.findings)
    return page.findings


def test_every_filter_narrows_findings_over_all_conversations_and_the_total_counts_them(
    inbox: SqlStore,
) -> None:
    everything = _all(inbox, FindingFilter())
    assert len(everything) == 60
    assert {f.conversation_id for f in everything} == set(CONVERSATIONS)

    def expect(chosen: FindingFilter, keep: object) -> None:
        wanted = sorted(f.finding_id for f in everything if keep(f))  # type: ignore[operator]
        page = inbox.findings_page(chosen, limit=7)
        assert page.total == len(wanted), chosen
        assert sorted(f.finding_id for f in _all(inbox, chosen)) == wanted, chosen
        assert len(page.findings) == min(7, len(wanted))

    expect(FindingFilter(severities=["high", "info"]), lambda f: f.severity in ("high", "info"))
    expect(FindingFilter(min_severity="medium"), lambda f: f.severity in ("medium", "high"))
    expect(FindingFilter(rules=["tool_loop"]), lambda f: f.rule == "tool_loop")
    expect(FindingFilter(origins=["model"]), lambda f: f.origin == "model")
    expect(FindingFilter(projects=["beta"]), lambda f: f.conversation_id == "test:beta-1")
    expect(
        FindingFilter(since=T0 + timedelta(minutes=10), until=T0 + timedelta(minutes=20)),
        lambda f: T0 + timedelta(minutes=10) <= f.created_at < T0 + timedelta(minutes=20),
    )
    expect(FindingFilter(text="RM -RF"), lambda f: "rm -rf" in f.content)
    expect(
        FindingFilter(text="loop alpha-2"),
        lambda f: f.title.startswith("tool_loop") and "alpha-2" in f.title,
    )
    expect(FindingFilter(text="100%_"), lambda f: False)
    expect(
        FindingFilter(projects=["alpha"], rules=["budget", "tool_loop"], min_severity="low"),
        lambda f: (
            f.conversation_id != "test:beta-1"
            and f.rule in ("budget", "tool_loop")
            and f.severity != "info"
        ),
    )
    some = everything[0]
    inbox.set_finding_status(str(some.finding_id), "dismissed")
    expect(FindingFilter(statuses=["dismissed"]), lambda f: f.finding_id == some.finding_id)
    expect(FindingFilter(statuses=["open"]), lambda f: f.finding_id != some.finding_id)


@pytest.mark.parametrize("sort", ["severity", "created", "updated", "rule", "conversation"])
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_pages_in_every_sort_order_cover_every_finding_once_in_order(
    inbox: SqlStore, sort: str, order: str
) -> None:
    pages = [
        inbox.findings_page(FindingFilter(), sort=sort, order=order, limit=8, offset=offset)  # type: ignore[arg-type]
        for offset in range(0, 64, 8)
    ]
    assert {page.total for page in pages} == {60}
    seen = [f for page in pages for f in page.findings]
    assert len(seen) == 60 and len({f.finding_id for f in seen}) == 60
    rank = {"info": 0, "low": 1, "medium": 2, "high": 3}
    key = {
        "severity": lambda f: rank[f.severity],
        "created": lambda f: f.created_at,
        "updated": lambda f: f.updated_at,
        "rule": lambda f: f.rule,
        "conversation": lambda f: f.conversation_id,
    }[sort]
    primary = [key(f) for f in seen]
    assert primary == sorted(primary, reverse=order == "desc")
    # Each page names the conversations it cites, with title and project.
    labels = pages[0].conversations
    assert {f.conversation_id for f in pages[0].findings} == set(labels)
    assert labels["test:beta-1" if "test:beta-1" in labels else next(iter(labels))].project in (
        "alpha",
        "beta",
    )


def test_findings_group_by_rule_and_by_conversation_with_true_counts(inbox: SqlStore) -> None:
    by_rule, total = inbox.finding_groups(FindingFilter(), by="rule")
    assert total == 4  # three rules and the model supervisor
    counts = {g.key: g.count for g in by_rule}
    assert counts == {"destructive_command": 18, "tool_loop": 18, "budget": 18, "supervisor": 6}
    assert all(g.open == g.count for g in by_rule)
    assert by_rule[0].top_severity == "high"

    by_conversation, total = inbox.finding_groups(
        FindingFilter(severities=["high"]), by="conversation", limit=2
    )
    assert total == 3 and len(by_conversation) == 2
    rest, _ = inbox.finding_groups(
        FindingFilter(severities=["high"]), by="conversation", limit=2, offset=2
    )
    groups = by_conversation + rest
    assert sum(g.count for g in groups) == 15
    assert {g.label for g in groups} == {f"Work on {c}" for c in CONVERSATIONS}
    assert {g.key: g.project for g in groups} == CONVERSATIONS
    assert all(g.latest.tzinfo is not None for g in groups)


def test_a_bulk_change_moves_what_the_lifecycle_allows_and_undo_restores_exactly(
    inbox: SqlStore,
) -> None:
    alpha = _all(inbox, FindingFilter(projects=["alpha"]))
    acknowledged, resolved = alpha[0], alpha[1]
    inbox.set_finding_status(str(acknowledged.finding_id), "acknowledged")
    inbox.set_finding_status(str(resolved.finding_id), "resolved")
    before = {f.finding_id: f for f in _all(inbox, FindingFilter())}

    change = inbox.change_findings(
        FindingFilter(projects=["alpha"]), action="dismiss", status="dismissed"
    )

    assert change.change_id is not None
    # A resolved finding cannot be dismissed: it stays as it was, and is counted.
    assert (change.changed, change.unchanged) == (len(alpha) - 1, 1)
    after = {f.finding_id: f for f in _all(inbox, FindingFilter())}
    assert after[resolved.finding_id].status == "resolved"
    assert {after[f.finding_id].status for f in alpha if f is not resolved} == {"dismissed"}
    assert all(after[i].status == "open" for i in after if i not in {f.finding_id for f in alpha})

    outcome = inbox.undo_finding_change(change.change_id)

    assert outcome.restored == len(alpha) - 1
    restored = {f.finding_id: f for f in _all(inbox, FindingFilter())}
    assert restored == before  # status, status time, and everything else as before
    with inbox._read() as c:
        from sqlalchemy import select

        from proctor.store import _schema as t

        times = dict(
            c.execute(select(t.findings.c.finding_id, t.findings.c.status_changed_at)).all()
        )
    assert times[acknowledged.finding_id] is not None
    assert sum(1 for v in times.values() if v is not None) == 2


def test_a_bulk_change_by_ids_touches_only_those_findings(inbox: SqlStore) -> None:
    chosen = [f.finding_id for f in _all(inbox, FindingFilter())[:50:2]]
    change = inbox.change_findings(
        FindingFilter(finding_ids=[str(i) for i in chosen]), action="ack", status="acknowledged"
    )
    assert change.changed == 25
    statuses = {f.finding_id: f.status for f in _all(inbox, FindingFilter())}
    assert [i for i, s in statuses.items() if s == "acknowledged"] == [
        i for i in statuses if i in chosen
    ]
    nothing = inbox.change_findings(
        FindingFilter(finding_ids=[str(i) for i in chosen]), action="ack", status="acknowledged"
    )
    assert (nothing.change_id, nothing.changed, nothing.unchanged) == (None, 0, 25)


def test_undo_is_refused_when_a_finding_changed_since_and_then_changes_nothing(
    inbox: SqlStore,
) -> None:
    change = inbox.change_findings(
        FindingFilter(rules=["budget"]), action="resolve", status="resolved"
    )
    assert change.change_id is not None
    budget = _all(inbox, FindingFilter(rules=["budget"]))
    # Reopened and resolved again: the same status as the change left, but a later change.
    inbox.set_finding_status(str(budget[3].finding_id), "open")
    inbox.set_finding_status(str(budget[3].finding_id), "resolved")
    snapshot = {f.finding_id: (f.status, f.updated_at) for f in _all(inbox, FindingFilter())}

    with pytest.raises(UndoRefusedError, match=r"1 of the 18 findings changed status since"):
        inbox.undo_finding_change(change.change_id)

    assert {
        f.finding_id: (f.status, f.updated_at) for f in _all(inbox, FindingFilter())
    } == snapshot


def test_undo_is_refused_twice_and_for_an_unknown_token(inbox: SqlStore) -> None:
    change = inbox.change_findings(
        FindingFilter(origins=["model"]), action="false_positive", status="false_positive"
    )
    assert change.change_id is not None
    inbox.undo_finding_change(change.change_id)
    with pytest.raises(UndoRefusedError, match="already undone"):
        inbox.undo_finding_change(change.change_id)
    with pytest.raises(NotFoundError, match="no bulk change"):
        inbox.undo_finding_change("0" * 32)


def test_undo_is_refused_once_a_conversation_of_the_change_was_deleted(inbox: SqlStore) -> None:
    change = inbox.change_findings(
        FindingFilter(severities=["high"]), action="dismiss", status="dismissed"
    )
    assert change.change_id is not None
    inbox.delete_conversation("test:beta-1")
    with pytest.raises(
        UndoRefusedError, match="5 of the 15 findings this change moved were deleted"
    ):
        inbox.undo_finding_change(change.change_id)
    assert {f.status for f in _all(inbox, FindingFilter(severities=["high"]))} == {"dismissed"}


def test_the_conversations_list_counts_open_findings_and_sorts_and_filters_by_them(
    inbox: SqlStore,
) -> None:
    # alpha-1: 20 open; alpha-2: its high findings dismissed; beta-1: all closed.
    inbox.change_findings(
        FindingFilter(conversation_ids=["test:beta-1"]), action="resolve", status="resolved"
    )
    inbox.change_findings(
        FindingFilter(conversation_ids=["test:alpha-2"], severities=["high"]),
        action="dismiss",
        status="dismissed",
    )
    rows, total = inbox.conversations_with_findings(sort="open_findings")
    assert total == 3
    shown = [(s.conversation_id, c.open, c.top_severity) for s, c in rows]
    assert shown == [
        ("test:alpha-1", 20, "high"),
        ("test:alpha-2", 15, "medium"),
        ("test:beta-1", 0, None),
    ]
    rows, _ = inbox.conversations_with_findings(sort="open_findings", order="asc")
    assert rows[0][0].conversation_id == "test:beta-1"
    rows, total = inbox.conversations_with_findings(has_open=True, min_severity="high")
    assert (total, [s.conversation_id for s, _ in rows]) == (1, ["test:alpha-1"])
    rows, total = inbox.conversations_with_findings(has_open=False)
    assert (total, [s.conversation_id for s, _ in rows]) == (1, ["test:beta-1"])
    rows, total = inbox.conversations_with_findings(project="alpha", sort="top_severity", limit=1)
    assert total == 2 and rows[0][0].conversation_id == "test:alpha-1"
    assert rows[0][0].messages == 3  # the summary is the list's usual one
    counts = inbox.open_findings_by_conversation(list(CONVERSATIONS))
    assert counts["test:alpha-2"].open == 15 and "test:beta-1" not in counts
