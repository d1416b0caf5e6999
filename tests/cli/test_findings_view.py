"""How findings read in the terminal: a model's judgement says so, with its confidence."""

from __future__ import annotations

from proctor.cli._findings_view import finding_block
from proctor.findings import Evidence, Finding


def _finding(**fields: object) -> Finding:
    values: dict[str, object] = {
        "key": "k",
        "conversation_id": "c",
        "rule": "supervisor.evidence",
        "rule_version": 1,
        "action": "warn",
        "category": "evidence_gap",
        "severity": "low",
        "title": "Success claimed after a failing run",
        **fields,
    }
    return Finding.model_validate(values)


def test_a_speculative_model_finding_says_it_is_a_judgement_without_verified_evidence() -> None:
    text = finding_block(_finding(origin="model", confidence=0.6, speculative=True)).plain
    assert "model judgement · confidence 0.60 · speculative" in text


def test_a_model_finding_with_evidence_is_not_called_speculative() -> None:
    evidence = [Evidence(source_type="message", source_id="cc:m1")]
    text = finding_block(_finding(origin="model", confidence=0.8, evidence=evidence)).plain
    assert "model judgement · confidence 0.80" in text and "speculative" not in text


def test_a_rule_finding_carries_no_model_line() -> None:
    evidence = [Evidence(source_type="message", source_id="cc:m1")]
    assert "model judgement" not in finding_block(_finding(evidence=evidence)).plain
