"""``proctor demo``: Proctor's main job on the bundled example sessions."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click
from rich.text import Text

from proctor._util.paths import proctor_home
from proctor._util.text import one_line
from proctor.cli._common import console, writable_store
from proctor.cli._findings_view import SEVERITY_STYLE
from proctor.cli._refs import conversation_refs
from proctor.cli._render import conversations_table, ingest_summary
from proctor.cli.graph import coverage_line
from proctor.errors import ConfigError
from proctor.findings import SEVERITY_ORDER
from proctor.graph.views import GraphView
from proctor.heartbeat import app_enabled, set_app_enabled
from proctor.ingest import ingest
from proctor.review import ReviewRequest, open_semantic_layer, start_review
from proctor.store import database_location
from proctor.supervision import check_conversations


def examples_dir() -> Path:
    """The bundled example sessions (inside the wheel, or ``examples/`` of a checkout)."""
    here = Path(__file__).resolve()
    for candidate in (here.parents[1] / "_examples", here.parents[3] / "examples"):
        if candidate.is_dir():
            return candidate
    raise ConfigError("the bundled examples are missing from this installation; reinstall Proctor")


@click.command()
@click.option(
    "--examples",
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    help="Folder of sessions to use instead of the bundled examples.",
)
def demo(examples: Path | None) -> None:
    """Import the bundled example sessions and show what Proctor found."""
    folder = examples or examples_dir()
    console.print(Text(f"Proctor demo · examples from {folder}", style="bold"))
    console.print(f"Database: {database_location()}\n", markup=False)
    with writable_store() as store:
        report = ingest(store, [folder])
        ingest_summary(report, console)
        console.print()
        rows = store.list_conversations(include_children=True)
        refs = conversation_refs(store, rows)
        console.print(conversations_table(rows, refs, width=console.width, title="Conversations"))
        tool_status: Counter[str] = Counter()
        failing: list[str] = []
        for row in rows:
            transcript = store.transcript(row.conversation_id)
            for call in transcript.tool_calls:
                tool_status[call.status] += 1
                if call.status == "error" or (call.exit_code not in (None, 0)):
                    failing.append(
                        f"{row.conversation.format}: {call.name} → exit {call.exit_code}"
                        if call.exit_code is not None
                        else f"{row.conversation.format}: {call.name} failed"
                    )
        results = check_conversations(
            store,
            [r.conversation_id for r in rows if r.conversation.parent_conversation_id is None],
        )
        if not app_enabled(store):
            set_app_enabled(store, True)  # the demo's own home: reviews are what it shows
        semantic, note = open_semantic_layer(store, None)
        review = start_review(store, ReviewRequest(), semantic=semantic, semantic_note=note)
        latest = store.overview(None, limit=1)
        view = store.graph(latest[0].result_id) if latest else None
    console.print()
    console.print(Text("What the transcripts contain", style="bold"))
    statuses = ", ".join(f"{count} {status}" for status, count in tool_status.most_common())
    console.print(f"  tool calls: {statuses}", markup=False)
    console.print(f"  failed tool calls: {len(failing)}", markup=False)
    for failure, count in Counter(failing).most_common(6):
        console.print(f"    {count}× {failure}", markup=False)
    if report.redactions:
        console.print(f"  secrets redacted before storage: {report.redactions}", markup=False)
    if report.reasoning_removed:
        console.print(
            f"  inline reasoning blocks removed: {report.reasoning_removed}", markup=False
        )
    found = sorted(
        (f for result in results for f in result.findings),
        key=lambda f: (-SEVERITY_ORDER[f.severity], f.conversation_id),
    )
    console.print()
    console.print(
        Text(
            f"What Proctor found ({len(found)} findings, deterministic rules, no model)",
            style="bold",
        )
    )
    for finding in found:
        line = Text("  ")
        line.append(
            f"{finding.severity.upper():<6}", style=SEVERITY_STYLE.get(finding.severity, "")
        )
        line.append(f" {finding.title}")
        line.append(f"  [{finding.rule}] {finding.conversation_id[:24]}", style="dim")
        console.print(line)
        cited = next((e for e in finding.evidence if e.excerpt), None)
        if cited is not None:
            console.print(Text(f"         “{cited.excerpt}”", style="italic dim"))
    if view is not None:
        _print_story(view, review.status)
    console.print()
    console.print(Text("Browse it", style="bold"))
    home = proctor_home()
    console.print(
        f"  PROCTOR_HOME={home} .venv/bin/proctor serve   # then open http://127.0.0.1:8700/",
        markup=False,
    )
    main_rows = [r for r in rows if r.conversation.parent_conversation_id is None]
    console.print(f"  PROCTOR_HOME={home} .venv/bin/proctor conversations list --all", markup=False)
    if main_rows:
        console.print(
            f"  PROCTOR_HOME={home} .venv/bin/proctor conversations show {refs[main_rows[0].conversation_id]}",
            markup=False,
        )
    console.print(f"  PROCTOR_HOME={home} .venv/bin/proctor findings list", markup=False)
    console.print(f"  PROCTOR_HOME={home} .venv/bin/proctor findings show <id>", markup=False)
    console.print(f"  PROCTOR_HOME={home} .venv/bin/proctor notifications", markup=False)
    if main_rows:
        console.print(
            f"  PROCTOR_HOME={home} .venv/bin/proctor goals {refs[main_rows[0].conversation_id]}",
            markup=False,
        )
    console.print(f"  PROCTOR_HOME={home} .venv/bin/proctor graph show", markup=False)
    console.print(
        f"  PROCTOR_HOME={home} .venv/bin/proctor search 'database is locked'", markup=False
    )
    console.print()
    console.print(Text("Add judgement (optional)", style="bold"))
    console.print(
        "  Model supervision is off: no model connection is configured, and none is needed\n"
        "  for the findings above. To have a model review a conversation as it grows:",
        markup=False,
    )
    target = refs[main_rows[0].conversation_id] if main_rows else "<conversation>"
    for command in (
        "models add NAME --provider openai --model MODEL [--base-url URL] --default",
        f"supervise enable {target} --mode evidence",
        f"supervise run {target}",
        "review run    # with a model: decisions, concepts and story lines join the graph",
    ):
        console.print(f"  PROCTOR_HOME={home} .venv/bin/proctor {command}", markup=False)


def _print_story(view: GraphView, status: str) -> None:
    """The story graph in brief: its story lines, what is still open, its coverage."""
    console.print()
    skipped = view.result.coverage.semantic == "skipped"
    console.print(
        Text(
            f"The story graph ({view.totals.events} events, {view.totals.entities} entities; "
            + ("structural layer, no model" if skipped else "structural and semantic layers")
            + f"; review {status})",
            style="bold",
        )
    )
    for line in view.story_lines:
        indent = "    ↳ " if line.parent_id is not None else "  "
        console.print(
            Text.assemble(indent, (one_line(line.title, 70), "bold"), f"  {line.summary}")
        )
    if view.open_items:
        console.print(Text("  Still open:", style="bold"))
        for item in view.open_items:
            console.print(Text(f"    ● {item.title}", style="yellow"))
    console.print(
        Text(f"  {coverage_line(view.result.coverage, view.result.complete)}", style="dim")
    )
