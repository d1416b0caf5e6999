"""``proctor demo`` (what ``make demo`` runs): import the bundled examples and show findings."""

from __future__ import annotations

from click.testing import CliRunner

from proctor.cli.main import cli
from proctor.store import open_store


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
