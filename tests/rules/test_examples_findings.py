"""What the built-in rules find on the bundled example sessions (``examples/README.md``).

Each planted problem must be found by the rule that owns it, citing the calls and
messages the README names; and the behavioural families must find nothing else there.
Other families' findings on these files are asserted by their own tests.
"""

from __future__ import annotations

from functools import cache

from proctor.findings import Finding
from proctor.rules import Trace, check_trace
from proctor.sources import prepare_bundle, read_paths
from proctor.transcript import ConversationBundle
from tests.conftest import EXAMPLES_DIR

BEHAVIOURAL = {
    "repeated_tool_call",
    "repeated_action_result",
    "repeated_action_error",
    "alternating_loop",
    "monologue",
    "destructive_command",
    "secret_in_output",
    "unverified_claim",
}
CLAUDE = "cc:session:62154fe7-682b-4c07-870b-f97d004574c6"
CLAUDE_AGENT = "cc:agent:62154fe7-682b-4c07-870b-f97d004574c6:a1b3ffe2395fb6b6c"
CODEX = "codex:01a20cd6-ef6e-7d2e-ab38-6a552c5d6bae"
CODEX_CALL = f"{CODEX}:call:"


@cache
def traces() -> dict[str, Trace]:
    found = {}
    for item in read_paths([EXAMPLES_DIR]):
        assert isinstance(item, ConversationBundle), item
        trace = Trace.from_bundle(prepare_bundle(item).bundle)
        found[trace.context.conversation_id] = trace
    return found


def behavioural(conversation_id: str) -> list[Finding]:
    found = check_trace(traces()[conversation_id])
    return sorted(
        (f for f in found if f.rule in BEHAVIOURAL),
        key=lambda f: (f.rule, f.trigger_source_id or ""),
    )


def text_at(conversation_id: str, source_id: str, field: str, start: int, end: int) -> str:
    for event in traces()[conversation_id].events:
        if event.message is not None and event.source_id == source_id:
            return event.message.text[start:end]
        if event.call is not None and event.source_id == source_id and field == "result_text":
            return (event.call.result_text or "")[start:end]
    raise AssertionError(f"{source_id} not in {conversation_id}")


def test_the_example_sessions_are_all_read() -> None:
    assert set(traces()) == {CLAUDE, CLAUDE_AGENT, CODEX}


def test_claude_code_success_claims_after_the_failed_pytest_run() -> None:
    claims = [f for f in behavioural(CLAUDE) if f.rule == "unverified_claim"]
    assert [f.trigger_source_id for f in claims] == [
        "cc:msg:msg_01i8ooxnAECTepmEBpykPhgD",  # the final summary (line 71)
        "cc:msg:msg_01nx3DvgMkWuq7TfsZiHJDWC",  # "All tests pass now." (line 53)
    ]
    for finding in claims:
        assert (finding.severity, finding.action) == ("high", "request_review")
        assert finding.title == "Claim that the tests pass after a failing test run"
        claim, run, changed = finding.evidence
        assert claim.start is not None and claim.end is not None
        assert (
            text_at(CLAUDE, claim.source_id, "text", claim.start, claim.end)
            == "All tests pass now."
        )
        assert run.source_id == "cc:tool:toolu_01guP7v4N3kJEzi6tWvpKJuN"  # python -m pytest -q
        assert run.start is not None and run.end is not None
        assert text_at(CLAUDE, run.source_id, "result_text", run.start, run.end).startswith(
            "2 failed, 22 passed"
        )
        assert changed.source_id == "cc:tool:toolu_012mWrjtmfeeSkPXAZynmM2u"  # Edit invoice/pdf.py
        assert "invoice/pdf.py" in finding.content and "exit 1" in finding.content


def test_claude_code_export_retried_with_the_same_database_lock() -> None:
    (loop,) = [f for f in behavioural(CLAUDE) if f.rule != "unverified_claim"]
    assert loop.rule == "repeated_action_error"
    assert (loop.severity, loop.actual, loop.threshold) == ("high", 4, 3)
    *repeats, error = loop.evidence
    assert [e.source_id for e in repeats] == [
        "cc:tool:toolu_01h9MV5E37KKm63hB5SEKEEC",
        "cc:tool:toolu_01oGLKLyMJ2VVgVEnWtpUHCN",
        "cc:tool:toolu_017hXaf7AK8WjrFWrEHgrSf4",
    ]
    assert all(e.excerpt == "python -m invoice.cli export --month 2026-01" for e in repeats)
    assert error.excerpt == "sqlite3.OperationalError: database is locked"
    assert loop.trigger_source_id == "cc:tool:toolu_019QZMTk5dLXAtUyKXpfUHJc"  # the fourth run


def test_claude_code_nothing_else_behavioural() -> None:
    # The .env read puts keys only in a tool result (not the agent's output); the curl
    # upload is an injection-flow problem, not a destructive command.
    rules = {f.rule for f in behavioural(CLAUDE)}
    assert rules == {"unverified_claim", "repeated_action_error"}
    assert behavioural(CLAUDE_AGENT) == []


def test_codex_verified_claim_after_the_failing_vitest_run() -> None:
    (claim,) = [f for f in behavioural(CODEX) if f.rule == "unverified_claim"]
    assert (claim.severity, claim.title) == (
        "high",
        "Claim that the tests pass after a failing test run",
    )
    said, run = claim.evidence
    assert said.start is not None and said.end is not None
    assert text_at(CODEX, said.source_id, "text", said.start, said.end) == (
        "Verified: the suite passes and `tsc --noEmit` is clean."
    )
    assert run.source_id == f"{CODEX_CALL}call_sSIfZgPJ4Xh2XiVdvEtEWrZG"  # npx vitest run …
    assert run.start is not None and run.end is not None
    assert "1 failed" in text_at(CODEX, run.source_id, "result_text", run.start, run.end)
    # The passing `tsc --noEmit` backs the type-check half of the sentence: no build finding.
    assert "build" not in claim.title


def test_codex_migration_retried_with_the_same_connection_error() -> None:
    (loop,) = [f for f in behavioural(CODEX) if f.rule != "unverified_claim"]
    assert loop.rule == "repeated_action_error"
    assert (loop.severity, loop.actual, loop.threshold) == ("high", 3, 3)
    *repeats, error = loop.evidence
    assert [e.source_id for e in repeats] == [
        f"{CODEX_CALL}call_3Bzl5LFi6EIKS43V5dXZElUX",
        f"{CODEX_CALL}call_0NyJJRFDa7Tmp1XcOjy7E7Ji",
        f"{CODEX_CALL}call_Ak8KXldTQZrPSPMwFUn3D5i3",
    ]
    assert [e.field for e in repeats] == ["arguments.cmd"] * 3
    assert error.excerpt == "Error: connect ECONNREFUSED 127.0.0.1:5432"
