"""Goal detectors (SPEC GOAL-3): drift, context loss, completion claimed without evidence."""

from __future__ import annotations

from proctor.findings import Finding
from proctor.rules import check_trace
from proctor.store import SqlStore
from proctor.supervisor._goal_completion import criteria_of
from proctor.supervisor._goal_detectors import DRIFT_STEPS, detect_goal_findings
from tests.supervisor.builders import Chat
from tests.supervisor.goal_helpers import trace_of, track

DRIFT_GOAL = "Fix the rounding bug in invoice_total.py so that totals round half up."


def _findings(store: SqlStore, chat: Chat, rule: str) -> list[Finding]:
    track(store, chat)
    trace = trace_of(store, chat.conversation_id)
    goals = store.goal_versions(chat.conversation_id)
    return [f for f in detect_goal_findings(trace, goals) if f.rule == rule]


def _on_topic(chat: Chat) -> None:
    chat.assistant("Looking at the rounding in invoice_total.py.")
    chat.tool("Read", {"file_path": "src/billing/invoice_total.py"}, "def total(lines): ...")
    chat.tool("Bash", {"command": "pytest tests/test_invoice_total.py -q"}, "1 failed")
    chat.tool("Grep", {"pattern": "ROUND_DOWN", "path": "src/billing"}, "invoice_total.py:3")


def _off_topic(chat: Chat, steps: int) -> list[str]:
    ids: list[str] = []
    chat.assistant("Let me freshen up the dashboard header colours.")
    actions = [
        ("Bash", {"command": "npm install left-pad"}),
        ("Read", {"file_path": "frontend/theme.css"}),
        ("WebFetch", {"url": "https://example.com/css-colour-palettes"}),
        ("Edit", {"file_path": "frontend/theme.css", "old_string": "#333", "new_string": "#444"}),
        ("Bash", {"command": "npx stylelint frontend/theme.css"}),
        ("Read", {"file_path": "frontend/header.tsx"}),
        ("Edit", {"file_path": "frontend/header.tsx", "old_string": "h1", "new_string": "h2"}),
        ("Bash", {"command": "git log --oneline frontend/"}),
        ("Read", {"file_path": "frontend/palette.json"}),
    ]
    for name, arguments in actions[: steps - 1]:
        ids.append(chat.tool(name, arguments, "ok"))
    return ids


def test_drift_is_reported_when_the_agent_stops_touching_the_goal(store: SqlStore) -> None:
    chat = Chat()
    goal_message = chat.user(DRIFT_GOAL)
    _on_topic(chat)
    off = _off_topic(chat, DRIFT_STEPS)

    (finding,) = _findings(store, chat, "goal.drift")

    assert (finding.origin, finding.category, finding.rule_version) == ("rule", "goal_drift", 1)
    cited = [e.source_id for e in finding.evidence]
    assert cited[0] == goal_message
    assert cited[-len(off) :] == off
    assert len(cited) == DRIFT_STEPS + 1  # the goal message and the off-goal steps
    assert finding.trigger_source_id == off[-1]
    assert finding.actual == DRIFT_STEPS


def test_no_drift_while_the_agent_works_on_the_goal(store: SqlStore) -> None:
    chat = Chat()
    chat.user(DRIFT_GOAL)
    _on_topic(chat)
    for number in range(12):
        chat.tool("Read", {"file_path": f"src/billing/rounding_{number}.py"}, "ok")
        chat.assistant("Still checking where invoice totals are rounded.")
        chat.tool("Bash", {"command": "ls"}, "a b")  # no salient terms: neutral

    assert _findings(store, chat, "goal.drift") == []


def test_no_drift_for_a_short_excursion(store: SqlStore) -> None:
    chat = Chat()
    chat.user(DRIFT_GOAL)
    _on_topic(chat)
    _off_topic(chat, DRIFT_STEPS - 1)
    chat.tool("Edit", {"file_path": "src/billing/invoice_total.py", "new_string": "x"}, "ok")

    assert _findings(store, chat, "goal.drift") == []


def test_work_the_user_asked_for_since_the_goal_is_not_drift(store: SqlStore) -> None:
    chat = Chat()
    chat.user(DRIFT_GOAL)
    _on_topic(chat)
    chat.user(
        "While you wait for CI, tweak the header colours in frontend/theme.css and the palette"
    )
    _off_topic(chat, DRIFT_STEPS + 1)

    assert _findings(store, chat, "goal.drift") == []


def test_work_on_what_an_on_goal_call_showed_is_not_drift(store: SqlStore) -> None:
    chat = Chat()
    chat.user("Work on issue PROJ-12. Run `tracker show PROJ-12` for the details.")
    chat.assistant("Reading PROJ-12.")
    issue = "PROJ-12: add OpenTelemetry tracing to the Phoenix endpoint and the Ecto repo"
    for _ in range(3):
        chat.tool("Bash", {"command": "tracker show PROJ-12"}, issue)
    for step in range(DRIFT_STEPS + 2):
        chat.tool(
            "Edit", {"file_path": f"lib/endpoint_{step}.ex", "new_string": "OpenTelemetry"}, "ok"
        )
        chat.assistant("Wiring tracing into the Phoenix endpoint and the Ecto repo.")

    assert _findings(store, chat, "goal.drift") == []


def test_a_cancelled_goal_cannot_drift(store: SqlStore) -> None:
    chat = Chat()
    chat.user(DRIFT_GOAL)
    _on_topic(chat)
    chat.user("never mind")
    _off_topic(chat, DRIFT_STEPS + 1)

    assert _findings(store, chat, "goal.drift") == []


def test_asking_again_for_an_established_value_is_context_loss(store: SqlStore) -> None:
    chat = Chat()
    stated = chat.user("Add an index to the orders table. The database is Postgres on port 5433.")
    chat.assistant("I'll write the migration.")
    question = chat.assistant("Before I run it: which database are you using?")

    (finding,) = _findings(store, chat, "goal.context_loss")

    user_evidence, agent_evidence = finding.evidence
    assert (user_evidence.source_id, agent_evidence.source_id) == (stated, question)
    assert user_evidence.excerpt == "The database is Postgres on port 5433"
    assert agent_evidence.excerpt == "Before I run it: which database are you using?"
    assert finding.category == "quality"
    assert finding.trigger_source_id == question


def test_asking_for_the_port_the_user_gave_is_context_loss(store: SqlStore) -> None:
    chat = Chat()
    chat.user("The database is Postgres on port 5433.")
    chat.assistant("What port is the database listening on?")

    (finding,) = _findings(store, chat, "goal.context_loss")
    assert finding.title == "Agent asks again for the port the user gave"


def test_a_value_given_as_an_answer_is_established(store: SqlStore) -> None:
    chat = Chat()
    chat.user("Push the fix when it is ready.")
    chat.assistant("Which branch should I push to?")
    chat.user("release-2.0")
    chat.assistant("Pushed. Which branch should I open the pull request against?")

    (finding,) = _findings(store, chat, "goal.context_loss")
    assert finding.title == "Agent asks again for the branch the user gave"


def test_questions_that_confirm_or_come_first_are_not_context_loss(store: SqlStore) -> None:
    chat = Chat()
    chat.user("Add an index to the orders table.")
    chat.assistant("Which database are you using?")
    chat.user("The database is Postgres on port 5433.")
    chat.assistant("Which database version are you on?")  # a different key
    chat.assistant("Which database is it, Postgres on 5433 as you said?")  # confirms the value

    assert _findings(store, chat, "goal.context_loss") == []


def test_stating_a_different_value_is_a_contradiction(store: SqlStore) -> None:
    chat = Chat()
    stated = chat.user("The database is Postgres on port 5433.")
    said = chat.assistant("Since the database is MySQL 8, I'll use the mysql driver.")

    (finding,) = _findings(store, chat, "goal.context_loss")

    assert finding.category == "contradiction"
    assert [e.source_id for e in finding.evidence] == [stated, said]
    assert finding.evidence[1].excerpt == "the database is MySQL 8"


def test_agreeing_hedged_or_vague_statements_are_not_contradictions(store: SqlStore) -> None:
    chat = Chat()
    chat.user("The database is Postgres on port 5433. The problem is a slow query.")
    chat.assistant("The database is PostgreSQL 16, so I'll use psycopg.")
    chat.assistant("If the database is MySQL, this would differ.")
    chat.assistant("The database is ready and the problem is the missing index.")
    chat.assistant("```\nthe database is MySQL\n```")

    assert _findings(store, chat, "goal.context_loss") == []


COMPLETION_GOAL = (
    "Add a --json flag to the export command.\n"
    "Acceptance criteria:\n"
    "- add a test for the JSON output\n"
    "- update the README\n"
    "- make sure the tests pass"
)


def test_criteria_are_read_from_sections_bullets_and_phrases() -> None:
    criteria = criteria_of(
        COMPLETION_GOAL + "\nThe parser must handle empty input. Please keep it fast."
    )
    assert [(c.text, c.kind) for c in criteria] == [
        ("add a test for the JSON output", "test_added"),
        ("update the README", "docs"),
        ("make sure the tests pass", "tests"),
        ("The parser must handle empty input", "terms"),
    ]


def test_completion_without_the_criteria_evidenced_is_reported(store: SqlStore) -> None:
    chat = Chat()
    chat.user(COMPLETION_GOAL)
    chat.assistant("Adding the flag.")
    chat.tool("Edit", {"file_path": "src/export.py", "new_string": "--json"}, "ok")
    claim = chat.assistant("Done! The --json flag is implemented.")

    findings = _findings(store, chat, "goal.unverified_completion")

    missing = {f.evidence[1].missing for f in findings}
    assert missing == {
        "a write to a test file: add a test for the JSON output",
        "a change to the README, docs or changelog: update the README",
        "a test run: make sure the tests pass",
    }
    for finding in findings:
        assert finding.category == "missing_requirement"
        assert finding.evidence[0].source_id == claim
        assert finding.evidence[0].excerpt == "Done!"
        assert finding.evidence[1].source_type == "conversation"
        assert finding.trigger_source_id == claim


def test_completion_with_every_criterion_evidenced_is_not_reported(store: SqlStore) -> None:
    chat = Chat()
    chat.user(COMPLETION_GOAL)
    chat.assistant("Adding the flag, a test and the docs.")
    chat.tool("Edit", {"file_path": "src/export.py", "new_string": "--json"}, "ok")
    chat.tool(
        "Write", {"file_path": "tests/test_export.py", "content": "def test_json(): ..."}, "ok"
    )
    chat.tool("Edit", {"file_path": "README.md", "new_string": "Use --json"}, "ok")
    chat.tool("Bash", {"command": "pytest -q"}, "5 passed in 0.1s", exit_code=0)
    chat.assistant("All set: the flag is implemented and documented.")

    assert _findings(store, chat, "goal.unverified_completion") == []


def test_a_claim_that_tests_pass_is_left_to_the_unverified_claim_rule(store: SqlStore) -> None:
    chat = Chat()
    chat.user("Add a --json flag to the export command. Make sure the tests pass.")
    chat.tool("Edit", {"file_path": "src/export.py", "new_string": "--json"}, "ok")
    chat.assistant("Done, and all tests pass.")

    assert _findings(store, chat, "goal.unverified_completion") == []
    trace = trace_of(store, chat.conversation_id)
    assert [f.rule for f in check_trace(trace)] == ["unverified_claim"]


def test_hedged_claims_and_plain_progress_are_not_completion(store: SqlStore) -> None:
    chat = Chat()
    chat.user(COMPLETION_GOAL)
    chat.assistant("Once the tests are added I'll be done.")
    chat.assistant("The flag is not finished yet.")
    chat.assistant("Is it done?")
    chat.assistant("I added the flag to the parser.")

    assert _findings(store, chat, "goal.unverified_completion") == []


def test_a_criterion_is_reported_once_per_goal(store: SqlStore) -> None:
    chat = Chat()
    chat.user("Add a --json flag to the export command. Update the README with an example.")
    chat.tool("Edit", {"file_path": "src/export.py", "new_string": "--json"}, "ok")
    chat.assistant("Done.")
    chat.assistant("Everything is complete.")

    (finding,) = _findings(store, chat, "goal.unverified_completion")
    assert finding.evidence[1].missing is not None
    assert finding.evidence[1].missing.endswith("Update the README with an example")


def test_a_must_criterion_is_evidenced_by_a_call_about_it(store: SqlStore) -> None:
    chat = Chat()
    chat.user("Write a CSV parser. The parser must handle empty input.")
    chat.tool(
        "Edit", {"file_path": "src/csv_parser.py", "new_string": "if not text: return []"}, "ok"
    )
    chat.assistant("I've implemented the parser.")
    (finding,) = _findings(store, chat, "goal.unverified_completion")
    assert finding.evidence[1].missing == "a tool call about it: The parser must handle empty input"

    other = Chat(conversation_id="sup:conv-2")
    other.user("Write a CSV parser. The parser must handle empty input.")
    other.tool("Edit", {"file_path": "src/csv_parser.py", "new_string": "# empty input"}, "ok")
    other.assistant("I've implemented the parser.")
    assert _findings(store, other, "goal.unverified_completion") == []


def test_findings_are_stable_across_runs(store: SqlStore) -> None:
    chat = Chat()
    chat.user(COMPLETION_GOAL)
    chat.tool("Edit", {"file_path": "src/export.py", "new_string": "--json"}, "ok")
    chat.assistant("Done! The --json flag is implemented.")
    first = {f.key for f in _findings(store, chat, "goal.unverified_completion")}
    chat.assistant("Anything else?")

    again = {f.key for f in _findings(store, chat, "goal.unverified_completion")}
    assert first == again
    assert len(first) == 3
