"""``proctor demo`` (what ``make demo`` runs): import the bundled examples and show findings."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from proctor.cli.main import cli
from proctor.store import open_store
from tests.conftest import REPO_ROOT

_SHOW = re.compile(r"proctor conversations show (\S+)")
_GOALS = re.compile(r"proctor goals (\S+)")


def test_the_demo_imports_the_examples_shows_the_rule_findings_and_how_to_add_a_model() -> None:
    result = CliRunner().invoke(cli, ["demo"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "What Proctor found (8 findings, deterministic rules, no model)" in result.output
    assert "Tool call acts on instructions injected in a tool output" in result.output
    assert "Model supervision is off" in result.output
    assert "proctor supervise enable" in result.output
    assert "The story graph (" in result.output
    assert "structural layer, no model; review completed" in result.output
    assert "pytest still failing" in result.output
    assert "    ↳ Map money rounding call sites" in result.output
    assert "proctor graph show" in result.output
    store = open_store()
    try:
        assert store.list_connections() == []
        assert store.counts().conversations >= 2
    finally:
        store.close()


def test_the_conversation_the_readme_and_the_demo_tell_you_to_show_is_there_after_the_demo() -> (
    None
):
    demo = CliRunner().invoke(cli, ["demo"], catch_exceptions=False)
    assert demo.exit_code == 0, demo.output
    readme = (REPO_ROOT / "README.md").read_text()
    named = {ref for ref in _SHOW.findall(readme + demo.output) if not ref.startswith("<")}
    assert len(named) >= 1, "neither the README nor the demo names a conversation to show"
    for ref in sorted(named):
        shown = CliRunner().invoke(cli, ["conversations", "show", ref, "--json"])
        assert shown.exit_code == 0, f"`proctor conversations show {ref}`: {shown.output}"
        conversation = json.loads(shown.output)["conversation"]
        assert conversation["parent_conversation_id"] is None, (
            "a main conversation, not a sub-agent"
        )


def test_the_goals_and_notifications_the_demo_names_are_there_without_a_model() -> None:
    demo = CliRunner().invoke(cli, ["demo"], catch_exceptions=False)
    assert demo.exit_code == 0, demo.output
    refs = _GOALS.findall(demo.output)
    assert refs, "the demo names no conversation for `proctor goals`"
    goals = CliRunner().invoke(cli, ["goals", refs[0], "--json"])
    assert goals.exit_code == 0, goals.output
    assert json.loads(goals.output)["current"]["version"] == 1
    assert "proctor notifications" in demo.output
    listed = CliRunner().invoke(cli, ["notifications", "--json"])
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.output)["total"] >= 1
