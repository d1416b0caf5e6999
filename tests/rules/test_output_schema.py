"""Output schemas (SPEC SUP-4): the final reply and tool arguments checked against the
policy's JSON Schemas, citing the failing field and the validator's message."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import pytest

from proctor.rules import Policy
from proctor.rules.builtin.output_schema import OutputSchemaMismatch
from tests.rules.helpers import CallSpec, MessageSpec, assistant, call, findings, gate, trace, user

SOURCE = "/repo/.proctor/policy.toml"
REPORT = {
    "type": "object",
    "required": ["status", "summary"],
    "properties": {
        "status": {"enum": ["done", "blocked"]},
        "summary": {"type": "string"},
        "items": {"type": "array", "items": {"properties": {"price": {"type": "number"}}}},
        "contact": {"type": "string", "format": "email"},
    },
}
TICKET = {
    "title": "Ticket",
    "type": "object",
    "required": ["title", "priority"],
    "properties": {"priority": {"enum": ["low", "medium", "high"]}},
}
DRAFT4 = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "properties": {"score": {"type": "number", "maximum": 10, "exclusiveMaximum": True}},
}


def schemas(*entries: tuple[str, dict[str, Any]]) -> Policy:
    return Policy.model_validate(
        {"output_schemas": [{"target": t, "schema": s} for t, s in entries], "source": SOURCE}
    )


FINAL = schemas(("final_message", REPORT), ("tool:create_ticket", TICKET))
GOOD = json.dumps({"status": "done", "summary": "Fixed the rounding."})


@dataclass(frozen=True)
class Case:
    name: str
    steps: tuple[MessageSpec, ...]
    title: str | None = None
    message: str = ""
    """A fragment of the validator's message, expected in the content."""
    field: str | None = None
    excerpt: str | None = None
    policy: Policy = FINAL


CASES = [
    Case(
        "a missing required field is reported at the top level",
        (assistant('{"status": "done"}'),),
        "Final reply fails output schema output_schemas[0] at (top level)",
        "'summary' is a required property",
        "text",
        '{"status": "done"}',
    ),
    Case(
        "a fenced json block is checked and cited",
        (assistant('Here is the report:\n```json\n{"status": "finished", "summary": "x"}\n```\nBye.'),),
        "Final reply fails output schema output_schemas[0] at status",
        "'finished' is not one of ['done', 'blocked']",
        "text",
        '{"status": "finished", "summary": "x"}',
    ),
    Case(
        "a nested field path is named",
        (assistant(json.dumps({"status": "done", "summary": "s", "items": [{"price": "12"}]})),),
        "Final reply fails output schema output_schemas[0] at items.0.price",
        "'12' is not of type 'number'",
    ),
    Case(
        "formats are checked",
        (assistant(json.dumps({"status": "done", "summary": "s", "contact": "nobody"})),),
        "Final reply fails output schema output_schemas[0] at contact",
        "'nobody' is not a 'email'",
    ),
    Case(
        "a reply that is not JSON is a mismatch",
        (assistant("All done, the rounding is fixed."),),
        "Final reply is not JSON (output schema output_schemas[0])",
        "neither JSON",
        None,
    ),
    Case(
        "the draft named by $schema is used",
        (assistant('{"score": 10}'),),
        "Final reply fails output schema output_schemas[0] at score",
        "greater than or equal to the maximum of 10",
        policy=schemas(("final_message", DRAFT4)),
    ),
    Case(
        "a schema's title names it",
        (assistant('{"title": "x"}'),),
        "Final reply fails output schema 'Ticket' at (top level)",
        "'priority' is a required property",
        policy=schemas(("final_message", TICKET)),
    ),
    # near misses
    Case("a valid reply passes", (assistant(GOOD),)),
    Case("only the last reply counts", (assistant("not json"), user("again"), assistant(GOOD))),
    Case("a valid fenced block among prose passes", (assistant(f"Done.\n```json\n{GOOD}\n```"),)),
    Case(
        "an unlabelled fence is accepted when it holds JSON",
        (assistant(f"```\n{GOOD}\n```"),),
    ),
    Case("a final message schema does not judge tool calls", (assistant(GOOD, call("Read", "x", file_path="a")),)),
    Case("without output schemas nothing is checked", (assistant("no json"),), policy=Policy()),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_final_message(case: Case) -> None:
    t = trace(user("fix it and report as JSON"), *case.steps)
    found = findings(t, OutputSchemaMismatch(), case.policy)
    if case.title is None:
        assert found == []
        return
    (finding,) = found
    assert finding.title == case.title
    assert (finding.severity, finding.category, finding.action) == ("medium", "quality", "warn")
    assert case.message in finding.content
    assert SOURCE in finding.content
    assert finding.threshold == "final_message"
    (evidence,) = finding.evidence
    last = [e.message for e in t.events if e.message is not None][-1]
    assert evidence.source_id == finding.trigger_source_id == last.source_id
    if case.field is not None:
        assert evidence.field == case.field
        assert evidence.start is not None and evidence.end is not None
        assert last.text[evidence.start : evidence.end] == case.excerpt


def test_a_run_without_a_reply_misses_the_final_message() -> None:
    t = trace(user("report"), assistant("", call("Read", "x", file_path="a")))
    (finding,) = findings(t, OutputSchemaMismatch(), FINAL)
    assert finding.title == "No final reply to check against output schema output_schemas[0]"
    (evidence,) = finding.evidence
    assert evidence.source_type == "conversation"
    assert evidence.missing == "a final reply matching output schema output_schemas[0]"


def test_all_problems_are_listed_with_the_first_in_the_title() -> None:
    t = trace(user("report"), assistant('{"status": "nope", "items": [{"price": "x"}]}'))
    (finding,) = findings(t, OutputSchemaMismatch(), FINAL)
    paths = [problem["path"] for problem in finding.actual]
    assert sorted(paths) == ["", "items.0.price", "status"]
    assert "2 more" in finding.content


TOOL_CASES = [
    ("an enum violation cites the argument", call("create_ticket", "ok", title="x", priority="urgent"),
     "create_ticket arguments fail output schema 'Ticket' at priority", "arguments.priority", '"urgent"'),
    ("a missing argument cites the arguments", call("create_ticket", "ok", title="x"),
     "create_ticket arguments fail output schema 'Ticket' at (top level)", "arguments", None),
    ("arguments recorded as a JSON string are parsed",
     CallSpec("create_ticket", '{"title": "x", "priority": "p0"}', "ok"),
     "create_ticket arguments fail output schema 'Ticket' at priority", "arguments.priority", '"p0"'),
    ("valid arguments pass", call("create_ticket", "ok", title="x", priority="low"), None, None, None),
    ("other tools are not checked", call("create_issue", "ok", title="x"), None, None, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "spec", "title", "field", "excerpt"), TOOL_CASES, ids=[c[0] for c in TOOL_CASES]
)
def test_tool_arguments(
    name: str, spec: CallSpec, title: str | None, field: str | None, excerpt: str | None
) -> None:
    t = trace(user("file a ticket"), assistant("", spec), assistant(GOOD))
    found = findings(t, OutputSchemaMismatch(), FINAL)
    assert [f.title for f in found] == ([title] if title else [])
    if title is None:
        return
    (evidence,) = found[0].evidence
    assert evidence.source_type == "tool_call"
    assert (evidence.field, evidence.excerpt) == (field, excerpt or evidence.excerpt)
    assert found[0].threshold == "tool:create_ticket"


@pytest.mark.parametrize(
    ("proposed", "decision"),
    [
        (call("create_ticket", title="x", priority="urgent"), "deny"),
        (call("create_ticket", title="x", priority="high"), "allow"),
        (call("Read", file_path="a"), "allow"),
    ],
    ids=["an invalid call is denied", "a valid call is allowed", "an unrelated call is allowed"],
)
def test_gate(proposed: CallSpec, decision: str) -> None:
    answer = gate(trace(user("file it")), proposed, OutputSchemaMismatch(), FINAL)
    assert answer.decision == decision


@pytest.mark.slow
def test_jsonschema_is_imported_only_for_a_policy_with_output_schemas() -> None:
    # The gate hook is a fresh process per tool call: it must not pay for jsonschema.
    code = (
        "import sys\n"
        "from proctor.rules import DEFAULT_POLICY, Supervisor, TraceContext\n"
        "Supervisor(TraceContext('c'), DEFAULT_POLICY).finish()\n"
        "print('jsonschema' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
