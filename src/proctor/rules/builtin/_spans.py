"""Evidence that points at characters inside a tool call's arguments.

``cite_call`` names a field; findings about a command or a pasted secret should also say
*where* in that field. These helpers find a piece of text among a call's argument strings
(the command of ``Bash``, the ``cmd`` of ``exec_command``, the ``-lc`` script inside a
Codex argv list, a file body) and cite its character range.
"""

from __future__ import annotations

from proctor._util.text import one_line
from proctor.findings import Evidence
from proctor.rules._calls import argument_strings, command_text
from proctor.rules._evidence import EXCERPT_CHARS, cite_call
from proctor.transcript import ToolCall


def shorten(text: str, limit: int = 60) -> str:
    """One line of at most ``limit`` characters (blanks collapsed, ``…`` where cut)."""
    return one_line(text, limit)


def locate(call: ToolCall, needle: str) -> tuple[str, int, int] | None:
    """``(field, start, end)`` of the first argument string holding ``needle``, or None."""
    if not needle:
        return None
    for path, value in argument_strings(call.arguments):
        start = value.find(needle)
        if start != -1:
            return path, start, start + len(needle)
    return None


def cite_argument_span(
    call: ToolCall, field: str, start: int | None, end: int | None, text: str
) -> Evidence:
    """A character range of one argument (``text`` is what the range holds).

    Args:
        call: The tool call.
        field: The argument's dot path (``arguments.command``).
        start: Where the range starts in the argument; None when not known.
        end: Where it ends; None when not known.
        text: What the range holds, for the excerpt.

    Returns:
        Evidence citing the range, with ``text`` on one line as its excerpt.
    """
    return Evidence(
        source_type="tool_call",
        source_id=call.source_id,
        field=field,
        start=start,
        end=end,
        excerpt=shorten(text, EXCERPT_CHARS) or None,
    )


def cite_text_in_call(call: ToolCall, needle: str) -> Evidence:
    """The range of ``needle`` in the call's arguments, or the whole arguments if not found."""
    found = locate(call, needle)
    if found is None:
        return cite_call(call, "arguments", needle)
    field, start, end = found
    return cite_argument_span(call, field, start, end, needle)


def cite_command(call: ToolCall) -> Evidence:
    """The argument holding the call's command line (or its arguments for other tools)."""
    command = command_text(call)
    if command is not None:
        for path, value in argument_strings(call.arguments):
            if value == command:
                return cite_call(call, path, command)
    strings = [value for _, value in argument_strings(call.arguments)]
    return cite_call(call, "arguments", " ".join(strings) if strings else call.name)
