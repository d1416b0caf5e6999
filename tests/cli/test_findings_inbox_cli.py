"""``proctor findings list`` over every conversation with the inbox's filters and totals,
and ``proctor findings bulk`` / ``findings undo`` (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from proctor.cli.main import cli
from tests.inbox_world import write_transcripts

CONVERSATIONS = 4
CALLS = 6


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, input=input)


def listing(*args: str) -> dict[str, object]:
    result = run("findings", "list", "--json", "--limit", "1000", *args)
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.output)
    return data


@pytest.fixture
def checked(tmp_path: Path) -> int:
    write_transcripts(tmp_path / "t", conversations=CONVERSATIONS, calls=CALLS)
    assert run("ingest", str(tmp_path / "t")).exit_code == 0
    assert run("check", "--all").exit_code == 0
    total = listing()["total"]
    assert isinstance(total, int)
    return total


def test_findings_list_filters_sorts_and_pages_with_the_total(checked: int) -> None:
    assert checked >= CONVERSATIONS * (CALLS + 2)
    loops = listing("--rule", "repeated_action_error")
    assert loops["total"] == CONVERSATIONS
    both = listing("--rule", "repeated_action_error", "--rule", "monologue")
    assert both["total"] == 2 * CONVERSATIONS
    billing = listing("--project", "billing", "--severity", "medium")
    assert billing["items"] and all(i["severity"] == "medium" for i in billing["items"])  # type: ignore[union-attr]
    pushed = listing("-q", "PUSH --FORCE")
    assert pushed["items"] and all("push --force" in i["title"] for i in pushed["items"])  # type: ignore[union-attr]
    assert listing("--origin", "model")["total"] == 0
    assert listing("--since", "2999-01-01")["total"] == 0
    assert listing("--until", "2999-01-01")["total"] == checked
    page = listing("--limit", "5", "--offset", "5", "--sort", "created", "--asc")
    assert page["total"] == checked and len(page["items"]) == 5  # type: ignore[arg-type]
    text = run("findings", "list", "--limit", "5")
    assert f"1–5 of {checked}; use --offset to page" in text.output
    bad = CliRunner().invoke(cli, ["findings", "list", "--since", "yesterday"])
    assert bad.exit_code == 2 and "--since" in bad.output


def test_findings_bulk_changes_what_the_filters_match_and_undo_restores_it(
    checked: int,
) -> None:
    done = run("findings", "bulk", "dismiss", "--rule", "monologue", "--yes", "--json")
    change = json.loads(done.output)
    assert (change["changed"], change["status"]) == (CONVERSATIONS, "dismissed")
    assert listing("--status", "dismissed")["total"] == CONVERSATIONS
    assert listing()["total"] == checked - CONVERSATIONS

    undone = run("findings", "undo", change["change_id"])

    assert "Undone: 4 finding(s) restored." in undone.output
    assert listing("--status", "dismissed")["total"] == 0
    assert listing()["total"] == checked


def test_findings_bulk_asks_first_and_undo_is_refused_after_a_later_change(
    checked: int,
) -> None:
    declined = run("findings", "bulk", "resolve", "--rule", "monologue", input="n\n")
    assert declined.exit_code == 1 and "resolve 4 finding(s)?" in declined.output
    assert listing("--status", "resolved")["total"] == 0
    done = run("findings", "bulk", "resolve", "--rule", "monologue", input="y\n")
    assert "4 finding(s) → resolved; 0 unchanged." in done.output
    change_id = done.output.split("proctor findings undo ")[1].split()[0]
    one = listing("--rule", "monologue", "--status", "resolved")["items"][0]  # type: ignore[index]
    assert run("findings", "reopen", one["finding_id"]).exit_code == 0
    refused = CliRunner().invoke(cli, ["findings", "undo", change_id])
    assert refused.exit_code != 0
    assert "1 of the 4 findings changed status since" in refused.output
    assert listing("--status", "resolved")["total"] == 3
