"""Idempotency keys (SPEC SUP-4): a successful operation repeated under the same key is a
duplicate (same arguments) or a conflict (different arguments); the gate denies it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from proctor.rules import Policy
from proctor.rules.builtin.idempotency import IdempotencyConflict
from proctor.transcript import ToolStatus
from tests.rules.helpers import CallSpec, assistant, call, findings, gate, trace, user

SOURCE = "/repo/.proctor/policy.toml"
KEYS = Policy.model_validate(
    {
        "idempotency": [
            {"tool": "send_money", "arguments": ["recipient", "subject"]},
            {"tool": "stripe_*", "arguments": ["idempotency_key"]},
            {"tool": "post_invoice", "arguments": ["invoice.id"]},
        ],
        "source": SOURCE,
    }
)


def pay(amount: int, subject: str = "rent", status: ToolStatus = "ok", **extra: Any) -> CallSpec:
    result = "sent" if status == "ok" else "failed"
    return call(
        "send_money",
        result,
        status=status,
        recipient="DE89",
        subject=subject,
        amount=amount,
        **extra,
    )


def pending_pay(amount: int) -> CallSpec:
    return CallSpec("send_money", {"recipient": "DE89", "subject": "rent", "amount": amount})


@dataclass(frozen=True)
class Case:
    name: str
    calls: tuple[CallSpec, ...]
    titles: tuple[str, ...] = ()
    severities: tuple[str, ...] = ()
    differs: tuple[tuple[str, ...], ...] = ()
    policy: Policy = KEYS


DUPLICATE = "Duplicate execution of send_money: same key and arguments as an earlier call"
CONFLICT = "Idempotency conflict on send_money: same key, different arguments"

CASES = [
    Case(
        "the same payment twice is a duplicate execution",
        (pay(100), pay(100)),
        (DUPLICATE,),
        ("medium",),
        ((),),
    ),
    Case(
        "the same key with another amount is a conflict",
        (pay(100), pay(120)),
        (CONFLICT,),
        ("high",),
        (("amount",),),
    ),
    Case(
        "an argument present only once is a difference",
        (pay(100), pay(100, note="again")),
        (CONFLICT,),
        ("high",),
        (("note",),),
    ),
    Case(
        "every repetition is reported",
        (pay(100), pay(100), pay(100)),
        (DUPLICATE, DUPLICATE),
        ("medium", "medium"),
        ((), ()),
    ),
    Case(
        "a key inside a nested argument",
        (
            call("post_invoice", "ok", invoice={"id": "INV-7", "total": 10}),
            call("post_invoice", "ok", invoice={"id": "INV-7", "total": 12}),
        ),
        ("Idempotency conflict on post_invoice: same key, different arguments",),
        ("high",),
        (("invoice",),),
    ),
    # near misses
    Case("a retry after a failure is not a repetition", (pay(100, status="error"), pay(100))),
    Case("a call whose result never came is not done", (pending_pay(100), pay(100))),
    Case("another key is another operation", (pay(100), pay(100, subject="deposit"))),
    Case(
        "a call without a key argument has no key",
        (call("send_money", "sent", recipient="DE89", amount=1),) * 2,
    ),
    Case(
        "the same key on another tool of the glob is another operation",
        (
            call("stripe_create_charge", "ok", idempotency_key="k1", amount=5),
            call("stripe_create_refund", "ok", idempotency_key="k1", amount=5),
        ),
    ),
    Case("without idempotency entries nothing is compared", (pay(100), pay(100)), policy=Policy()),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_idempotency_conflict(case: Case) -> None:
    t = trace(user("pay the rent"), assistant("", *case.calls))
    found = findings(t, IdempotencyConflict(), case.policy)
    assert [f.title for f in found] == list(case.titles)
    calls = [e.call for e in t.events if e.kind == "call"]
    first = calls[0]
    assert first is not None
    for finding, severity, differs in zip(found, case.severities, case.differs, strict=True):
        assert (finding.severity, finding.action, finding.category) == (severity, "warn", "risk")
        assert finding.actual["differs"] == list(differs)
        later, earlier = finding.evidence
        assert earlier.source_id == first.source_id
        assert later.source_id == finding.trigger_source_id != first.source_id
        assert later.field == earlier.field
        assert later.field is not None and later.field.startswith("arguments.")
        assert SOURCE in finding.content


def test_the_key_values_are_in_the_finding() -> None:
    t = trace(user("pay"), assistant("", pay(100), pay(120)))
    (finding,) = findings(t, IdempotencyConflict(), KEYS)
    assert finding.actual == {
        "key": {"recipient": "DE89", "subject": "rent"},
        "differs": ["amount"],
    }
    assert finding.threshold == ["recipient", "subject"]
    assert 'recipient="DE89"' in finding.content
    assert finding.evidence[0].excerpt == "DE89"


@pytest.mark.parametrize(
    ("name", "proposed", "policy", "decision"),
    [
        ("the gate denies a repeated payment", pay(100), KEYS, "deny"),
        ("the gate denies a conflicting payment", pay(999), KEYS, "deny"),
        ("the gate allows a payment under a new key", pay(100, subject="deposit"), KEYS, "allow"),
        (
            "the policy can let a repetition through with a finding",
            pay(100),
            KEYS.model_copy(update={"rules": {"idempotency_conflict": "warn"}}),
            "allow",
        ),
    ],
)
def test_gate(name: str, proposed: CallSpec, policy: Policy, decision: str) -> None:
    t = trace(user("pay"), assistant("", pay(100)))
    answer = gate(t, proposed, IdempotencyConflict(), policy)
    assert answer.decision == decision
    assert len(answer.findings) == (0 if proposed.arguments["subject"] == "deposit" else 1)
