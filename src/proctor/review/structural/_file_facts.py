"""Facts of file and fetch tools: files read, edited and created; URLs fetched.

Claude Code (``Read``, ``Edit``, ``MultiEdit``, ``Write``, ``NotebookEdit``), Codex
(``apply_patch``: ``*** Add File`` creates, ``*** Update File`` edits, ``*** Delete
File`` deletes), Gemini CLI (``read_file``, ``write_file``, ``replace``,
``read_many_files``), the Anthropic text editor, and MCP file servers (``read_text_file``,
``write_file`` …). Searches over folders (``Grep``, ``Glob``, ``LS``) name folders, not
files, and yield nothing here. A write tool's result says whether the file was new
(``File created successfully``, Claude Code's ``type: create``).
"""

from __future__ import annotations

import re
from typing import Literal

from proctor.graph import EventKind
from proctor.review.structural._builder import Outcome
from proctor.review.structural._paths import file_description, file_identity
from proctor.review.structural._scope import CallScope
from proctor.review.structural._urls import tool_urls, url_identity
from proctor.rules import argument
from proctor.rules.builtin import FileAccess, file_accesses, tool_base_name

Use = Literal["read", "edit", "write", "delete"]

# fmt: off
_TOOLS: dict[str, Use] = {
    **dict.fromkeys(("read", "read_file", "notebookread", "read_many_files", "view_file",
                     "open_file", "read_text_file", "read_multiple_files", "read_media_file"),
                    "read"),
    **dict.fromkeys(("edit", "multiedit", "multi_edit", "notebookedit", "replace", "edit_file",
                     "str_replace", "insert", "search_replace", "append_file",
                     "append_to_file", "edit_notebook", "apply_patch", "applypatch"), "edit"),
    **dict.fromkeys(("write", "write_file", "create_file", "write_to_file"), "write"),
    **dict.fromkeys(("delete_file", "remove_file"), "delete"),
}
# fmt: on
_EDITORS = frozenset({"str_replace_editor", "str_replace_based_edit_tool", "text_editor"})
_VERBS: dict[str, Use] = {
    **dict.fromkeys(("read", "view", "open", "get", "cat", "load", "show"), "read"),
    **dict.fromkeys(("write", "create", "save", "put"), "write"),
    **dict.fromkeys(("edit", "update", "replace", "patch", "append", "insert", "modify"), "edit"),
    **dict.fromkeys(("delete", "remove", "unlink"), "delete"),
}
_FETCH_WORDS = (
    "fetch", "webpage", "web_page", "browse", "navigate", "open_page", "open_url", "scrape",
    "crawl", "download", "get_url", "read_url", "http_get", "web_search",
)  # fmt: skip
_CREATED = re.compile(r"\bcreated\b|\bnew file\b", re.IGNORECASE)
_UPDATED = re.compile(r"\bupdated\b|\boverw", re.IGNORECASE)
_EXTRA_PATH_KEYS = ("absolute_path",)
"""Path arguments the shared rules helpers do not read (Gemini CLI's older ``read_file``)."""


def file_use(scope: CallScope) -> Use | None:
    """What a non-shell tool does to the files it names, by its name; None for other tools."""
    name = tool_base_name(scope.call)
    if name in _TOOLS:
        return _TOOLS[name]
    if name in _EDITORS:
        command = argument(scope.call, "command")
        editor: dict[str, Use] = {"view": "read", "create": "write"}
        return editor.get(str(command), "edit")
    if "file" in name or "notebook" in name:
        first = re.split(r"[_\-]", name, maxsplit=1)[0]
        return _VERBS.get(first)
    return None


def file_facts(scope: CallScope, outcome: Outcome) -> list[str]:
    """Record the files a file tool used; returns their entity ids (for an error event)."""
    use = file_use(scope)
    if use is None:
        return []
    accesses = list(file_accesses(scope.call)) or _extra_paths(scope)
    builder, source = scope.builder, scope.source
    named: list[str] = []
    for access in accesses:
        identity = file_identity(access.path, base=access.base, cwd=scope.cwd)
        if identity is None or identity == ".":
            continue
        span = None if access.start is None or access.end is None else (access.start, access.end)
        ref = scope.cite(access.field, span)
        file_id = builder.entity(
            source,
            "file",
            identity,
            name=identity,
            description=file_description(identity, scope.cwd),
            refs=[ref],
        )
        named.append(file_id)
        if outcome == "failed":
            continue
        kind, verb = _event_kind(scope, use, access)
        if kind != "file_read":
            builder.changed_files[source.conversation_id].add(identity)
        builder.event(
            source,
            kind,
            part=f"{kind}:{identity}",
            title=f"{verb} {identity}",
            summary=f"{verb} {identity} with {scope.call.name}"
            + ("." if outcome == "ok" else " (no result recorded)."),
            refs=[ref],
            entity_ids=[file_id],
            outcome=outcome,
            occurred_at=scope.occurred_at,
        )
    return named


def _extra_paths(scope: CallScope) -> list[FileAccess]:
    found = []
    for key in _EXTRA_PATH_KEYS:
        value = argument(scope.call, key)
        if isinstance(value, str) and value:
            found.append(FileAccess(value, "read", f"arguments.{key}"))
    return found


def _event_kind(scope: CallScope, use: Use, access: FileAccess) -> tuple[EventKind, str]:
    """The event kind and title verb of one path a file tool used."""
    if use == "read":
        return "file_read", "Read"
    if use == "delete" or access.access == "delete":
        return "file_edit", "Deleted"
    header = _patch_header(scope, access)
    if header is not None:
        return (
            ("file_create", "Created") if header in ("Add", "Move to") else ("file_edit", "Edited")
        )
    if use == "write":
        kind = scope.call.attributes.get("type")
        result = scope.call.result_text or ""
        if kind == "create" or (kind != "update" and _CREATED.search(result)):
            return "file_create", "Created"
        if kind == "update" or _UPDATED.search(result):
            return "file_edit", "Overwrote"
        return "file_edit", "Wrote"
    return "file_edit", "Edited"


def _patch_header(scope: CallScope, access: FileAccess) -> str | None:
    """``Add``/``Update``/``Delete``/``Move to`` of the patch line naming the path, if any."""
    if access.start is None:
        return None
    field = access.field
    value = scope.call.arguments if field == "arguments" else argument(scope.call, field[10:])
    if not isinstance(value, str):
        return None
    line = value[value.rfind("\n", 0, access.start) + 1 : access.start]
    match = re.match(r"^\*\*\* (Add|Update|Delete) File: $|^\*\*\* (Move to): $", line)
    return None if match is None else match.group(1) or match.group(2)


def is_fetch_tool(scope: CallScope) -> bool:
    """A tool that reads web pages (``WebFetch``, ``web_fetch``, ``fetch_webpage`` …)."""
    name = tool_base_name(scope.call)
    return any(word in name for word in _FETCH_WORDS)


def fetch_facts(scope: CallScope, outcome: Outcome) -> list[str]:
    """Record the URLs a fetch tool read; returns their entity ids (for an error event)."""
    if not is_fetch_tool(scope):
        return []
    builder, source = scope.builder, scope.source
    named: list[str] = []
    for use in tool_urls(scope.call, prompt=True):
        identity = url_identity(use.url)
        if identity is None:
            continue
        ref = scope.cite(use.field, use.span)
        url_id = builder.entity(
            source,
            "url",
            identity,
            name=identity,
            description=f"Web address {identity}",
            refs=[ref],
        )
        named.append(url_id)
        if outcome == "failed":
            continue
        builder.event(
            source,
            "url_fetch",
            part=identity,
            title=f"Fetched {identity}",
            summary=f"{scope.call.name} read {identity}"
            + ("." if outcome == "ok" else " (no result recorded)."),
            refs=[ref],
            entity_ids=[url_id],
            outcome=outcome,
            occurred_at=scope.occurred_at,
        )
    return named
