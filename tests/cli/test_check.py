"""``proctor check`` and ``proctor findings`` end to end on the bundled examples (SUP-4, SUP-8)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner, Result

from proctor.cli.main import cli
from tests.conftest import EXAMPLES_DIR


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def checked() -> dict[str, object]:
    assert run("ingest", str(EXAMPLES_DIR)).exit_code == 0
    result = run("check", "--all", "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.output)
    return data


def _rules(data: dict[str, object]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for conversation in data["conversations"]:  # type: ignore[attr-defined]
        found[conversation["conversation_id"]] = {f["rule"] for f in conversation["findings"]}
    return found


def test_check_finds_the_planted_problems_in_the_examples(checked: dict[str, object]) -> None:
    rules = _rules(checked)
    claude = next(v for k, v in rules.items() if k.startswith("cc:session:"))
    codex = next(v for k, v in rules.items() if k.startswith("codex:"))
    assert {
        "unverified_claim",
        "repeated_action_error",
        "injection_then_action",
        "cross_project_read",
    } <= claude
    assert {"unverified_claim", "repeated_action_error"} <= codex
    assert any(k.startswith("cc:agent:") for k in rules), "sub-agent conversations are checked too"


def test_every_finding_cites_a_stored_source(checked: dict[str, object]) -> None:
    for conversation in checked["conversations"]:  # type: ignore[attr-defined]
        for finding in conversation["findings"]:
            assert finding["evidence"], finding["title"]
            for evidence in finding["evidence"]:
                assert evidence["source_id"]
                if evidence["source_type"] != "conversation":
                    shown = run("conversations", "show", conversation["conversation_id"], "--json")
                    ids = {m["source_id"] for m in json.loads(shown.output)["messages"]}
                    ids |= {c["source_id"] for c in json.loads(shown.output)["tool_calls"]}
                    assert evidence["source_id"] in ids


def test_checking_again_updates_instead_of_duplicating(checked: dict[str, object]) -> None:
    before = json.loads(run("findings", "list", "--all", "--json", "--limit", "1000").output)
    again = json.loads(run("check", "--all", "--json").output)
    assert all(not c["new"] and not c["notified"] for c in again["conversations"])
    after = json.loads(run("findings", "list", "--all", "--json", "--limit", "1000").output)
    assert after["total"] == before["total"]


def test_triage_keeps_the_users_status_across_checks(checked: dict[str, object]) -> None:
    listing = json.loads(run("findings", "list", "--json", "--rule", "unverified_claim").output)
    finding_id = listing["items"][0]["finding_id"]
    assert run("findings", "false-positive", finding_id[:10]).exit_code == 0
    assert run("findings", "digest", finding_id[:10]).exit_code == 0
    run("check", "--all")
    shown = json.loads(run("findings", "show", finding_id, "--json").output)
    assert (shown["status"], shown["digested"]) == ("false_positive", True)
    assert finding_id not in {
        f["finding_id"]
        for f in json.loads(run("findings", "list", "--json", "--limit", "1000").output)["items"]
    }
    refused = CliRunner().invoke(cli, ["findings", "resolve", finding_id])
    assert refused.exit_code == 2
    assert "cannot become 'resolved'" in refused.output


def test_check_prints_findings_with_evidence_and_fails_on_request() -> None:
    run("ingest", str(EXAMPLES_DIR))
    result = CliRunner().invoke(cli, ["check", "--all", "--fail-on", "high"])
    assert result.exit_code == 1
    assert "Tool call acts on instructions injected in a tool output" in result.output
    assert "↳ tool_call" in result.output
    assert "result_text:" in result.output


def test_check_needs_conversations_or_all() -> None:
    result = CliRunner().invoke(cli, ["check"])
    assert result.exit_code == 2
    assert "pass --all" in result.output


def test_rules_lists_every_rule_and_a_policy_can_turn_one_off(tmp_path: object) -> None:
    from pathlib import Path

    policy = Path(str(tmp_path)) / "policy.toml"
    policy.write_text('[rules]\nunverified_claim = "off"\n')
    listed = json.loads(run("rules", "--policy", str(policy), "--json").output)
    gates = {r["rule"]: r["gate"] for r in listed["rules"]}
    assert gates["unverified_claim"] == "off"
    assert gates["injection_then_action"] == "deny"
    bad = Path(str(tmp_path)) / "bad.toml"
    bad.write_text('[rules]\nunverified_claims = "off"\n')
    refused = CliRunner().invoke(cli, ["policy", "check", str(bad)])
    assert refused.exit_code == 2
    assert "rules.unverified_claims: unknown rule" in refused.output
