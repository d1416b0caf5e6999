"""``proctor graph continue``: continue a discussion from a result (UI-5).

Builds the context draft (the result's facts and cited sources, at most 12,000
characters), lets you edit it (``--edit`` opens $EDITOR), and writes it as a
ready-to-paste prompt file: Proctor cannot type into another program's session.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import click
from rich.text import Text

from proctor.cli._common import console, err_console, json_option, print_json, readable_store
from proctor.discussion import (
    ContextDraft,
    Focus,
    build_context_draft,
    check_edited_draft,
    write_prompt_file,
)
from proctor.errors import ConfigError


@click.command("continue")
@click.argument("result")
@click.option("--story-line", "story_line", help="Focus on this story line (id or prefix).")
@click.option("--entity", help="Focus on this entity (id or prefix).")
@click.option("--open-item", "open_item", help="Focus on this open item (key or prefix).")
@click.option("--edit", is_flag=True, help="Edit the draft in $EDITOR before it is written.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the prompt here (a new file) instead of $PROCTOR_HOME/prompts/.",
)
@click.option("--print", "print_only", is_flag=True, help="Print the draft; write no file.")
@json_option()
def continue_command(
    result: str,
    story_line: str | None,
    entity: str | None,
    open_item: str | None,
    edit: bool,
    out: Path | None,
    print_only: bool,
    as_json: bool,
) -> None:
    """Turn RESULT (id or prefix) into a draft to continue the discussion, and save it.

    The draft quotes the result's facts and sources as data between marker lines; paste
    the prompt file into the agent's conversation yourself.
    """
    focus = Focus(story_line_id=story_line, entity_id=entity, open_item_key=open_item)
    with readable_store() as store:
        draft = build_context_draft(store, result, focus)
    text = draft.text
    if edit:
        edited = click.edit(text, extension=".md", require_save=False)
        if edited is None:
            raise ConfigError("the editor closed without the draft; nothing was written")
        text = edited
    text = check_edited_draft(text)
    path = None if print_only else write_prompt_file(text, draft.result_id, out)
    if as_json:
        print_json(_json(draft, text, path))
    elif print_only:
        sys.stdout.write(text + "\n")
    else:
        _report(draft, text, path)


def _json(draft: ContextDraft, text: str, path: Path | None) -> dict[str, object]:
    return {
        "result_id": draft.result_id,
        "focus": draft.focus.label,
        "draft": text,
        "chars": len(text),
        "trimmed": draft.trimmed,
        "left_out": [dataclasses.asdict(x) for x in draft.left_out],
        "sources": [dataclasses.asdict(s) for s in draft.sources],
        "prompt_file": None if path is None else str(path),
    }


def _report(draft: ContextDraft, text: str, path: Path | None) -> None:
    console.print(
        Text.assemble(
            ("Draft ", "bold"),
            f"from result {draft.result_id[:12]} ({draft.focus.label}): {len(text):,} characters, ",
            f"{len(draft.sources)} sources cited",
        )
    )
    if draft.left_out:
        listed = ", ".join(f"{x.left_out:,} of {x.total:,} {x.part}" for x in draft.left_out)
        console.print(Text(f"Left out to stay within the limit: {listed}", "yellow"))
    if path is not None:
        console.print(Text(f"Prompt file: {path}"))
        err_console.print(
            Text(
                "Paste it into the agent's conversation: Proctor cannot type into another "
                "program's session.",
                "dim",
            )
        )
