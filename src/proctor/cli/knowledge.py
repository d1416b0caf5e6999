"""``proctor kb``: the local knowledge base (UI-5) — list, show, preview, write.

``write`` previews the note for an entity of a result, shows the exact text, and writes
only after you confirm (``--yes`` confirms up front); it appends a dated section to an
existing entry and never rewrites what is there. External bases (``attach``) are read
only. Note text read from disk or built from observed content is printed literally.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from rich.text import Text

from proctor.cli._common import console, json_option, print_json, readable_store, writable_store
from proctor.errors import NotFoundError
from proctor.knowledge import (
    DIR_ENV,
    DIR_SETTING,
    EXTERNAL_SETTING,
    LOCAL_BASE,
    KnowledgeBase,
    KnowledgePreview,
    check_base_name,
    confirm_write,
    find_base,
    knowledge_bases,
    list_entries,
    preview_entity_note,
    read_entry,
)
from proctor.store import database_exists

_BASE_OPTION = click.option(
    "--base", default=LOCAL_BASE, show_default=True, help="Which knowledge base (`kb bases`)."
)


@click.group()
def kb() -> None:
    """The local knowledge base: Markdown notes Proctor adds to only after you confirm."""


@contextmanager
def _configured_bases() -> Iterator[tuple[KnowledgeBase, ...]]:
    if not database_exists():
        yield knowledge_bases(None)
        return
    with readable_store() as store:
        yield knowledge_bases(store)


@kb.command("bases")
@json_option()
def bases_command(as_json: bool) -> None:
    """List the knowledge bases: the local, writable one and external, read-only ones."""
    with _configured_bases() as bases:
        pass
    if as_json:
        print_json([{**dataclasses.asdict(b), "root": str(b.root)} for b in bases])
        return
    for base in bases:
        access = "writable" if base.writable else "read-only"
        console.print(Text.assemble((base.name, "bold"), f"  {access}  ", str(base.root)))


@kb.command("list")
@_BASE_OPTION
@json_option()
def list_command(base: str, as_json: bool) -> None:
    """List the entries of a knowledge base."""
    with _configured_bases() as bases:
        entries = list_entries(find_base(bases, base))
    if as_json:
        print_json([dataclasses.asdict(entry) for entry in entries])
        return
    if not entries:
        console.print(f"The {base} knowledge base has no entries yet.", markup=False)
        return
    for entry in entries:
        console.print(Text.assemble(entry.name, (f"  {entry.size:,} bytes", "dim")))


@kb.command("show")
@click.argument("name")
@_BASE_OPTION
@json_option()
def show_command(name: str, base: str, as_json: bool) -> None:
    """Print one entry (NAME as `kb list` shows it)."""
    with _configured_bases() as bases:
        entry = read_entry(find_base(bases, base), name)
    if as_json:
        print_json(dataclasses.asdict(entry))
        return
    console.print(Text(entry.text))


def _preview(result: str, entity: str, entry: str | None, base: str) -> KnowledgePreview:
    with readable_store() as store:
        return preview_entity_note(
            store, knowledge_bases(store), result, entity, entry=entry, base=base
        )


def _print_preview(preview: KnowledgePreview) -> None:
    action = "Create" if preview.mode == "create" else "Append to"
    console.print(
        Text.assemble(
            (f"{action} {preview.base}:{preview.entry}.md", "bold"),
            (f"  digest {preview.digest[:16]}", "dim"),
        )
    )
    console.print(Text(preview.text))


@kb.command("preview")
@click.argument("result")
@click.argument("entity")
@click.option("--entry", help="The entry to create or extend (default: from the entity's name).")
@_BASE_OPTION
@json_option()
def preview_command(result: str, entity: str, entry: str | None, base: str, as_json: bool) -> None:
    """Show the note `kb write` would write for ENTITY of RESULT; nothing is written."""
    preview = _preview(result, entity, entry, base)
    if as_json:
        print_json(dataclasses.asdict(preview))
        return
    _print_preview(preview)


@kb.command("write")
@click.argument("result")
@click.argument("entity")
@click.option("--entry", help="The entry to create or extend (default: from the entity's name).")
@_BASE_OPTION
@click.option("--yes", is_flag=True, help="Confirm without asking (the preview is still printed).")
def write_command(result: str, entity: str, entry: str | None, base: str, yes: bool) -> None:
    """Preview the note for ENTITY of RESULT, then write it once you confirm."""
    preview = _preview(result, entity, entry, base)
    _print_preview(preview)
    if not yes and not click.confirm("Write this to the knowledge base?", default=False):
        console.print("Nothing written.")
        return
    with _configured_bases() as bases:
        written = confirm_write(
            bases, preview.entry, preview.text, preview.digest, base=preview.base
        )
    verb = "Created" if written.mode == "create" else "Extended"
    console.print(Text(f"{verb} {written.path} ({written.chars:,} characters written)"))


@kb.command("attach")
@click.argument("name")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
def attach_command(name: str, folder: Path) -> None:
    """Add an external knowledge base: FOLDER is read, never written."""
    check_base_name(name)
    with writable_store() as store:
        current = dict(store.get_setting(EXTERNAL_SETTING) or {})
        current[name] = str(folder.expanduser().resolve())
        store.set_setting(EXTERNAL_SETTING, current)
    console.print(Text(f"Attached {name} (read-only): {current[name]}"))


@kb.command("detach")
@click.argument("name")
def detach_command(name: str) -> None:
    """Forget an external knowledge base (its folder is left as it is)."""
    with writable_store() as store:
        current = dict(store.get_setting(EXTERNAL_SETTING) or {})
        if current.pop(name, None) is None:
            raise NotFoundError(
                f"no attached knowledge base {name!r}; `proctor kb bases` lists them"
            )
        store.set_setting(EXTERNAL_SETTING, current or None)
    console.print(Text(f"Detached {name}"))


@kb.command("dir")
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--reset", is_flag=True, help="Back to the default ($PROCTOR_HOME/knowledge).")
def dir_command(folder: Path | None, reset: bool) -> None:
    """Show or set the local knowledge base's folder (the PROCTOR_KNOWLEDGE_DIR variable wins)."""
    if reset:
        with writable_store() as store:
            store.set_setting(DIR_SETTING, None)
    elif folder is not None:
        with writable_store() as store:
            store.set_setting(DIR_SETTING, str(folder.expanduser().resolve()))
    with _configured_bases() as bases:
        local = find_base(bases, LOCAL_BASE)
    console.print(Text(str(local.root)))
    if os.environ.get(DIR_ENV):
        console.print(Text(f"(set by {DIR_ENV})", "dim"))
