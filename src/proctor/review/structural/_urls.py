"""URLs a call fetched or sent data to: fetch tools' arguments and ``curl``/``wget`` words.

A URL entity's identity is the URL without its fragment, scheme and host lower-cased:
the fragment never reaches the server, so ``…/decimal.html#quantize`` and
``…/decimal.html`` are one page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from proctor.review.structural._shell import program_args, program_name
from proctor.rules import argument_strings
from proctor.rules.builtin import SimpleCommand
from proctor.transcript import ToolCall

_URL = re.compile(r"https?://[^\s<>\"'`)\]}]+", re.IGNORECASE)
_URL_KEYS = ("url", "urls", "uri", "href", "link", "links")
_CURL_SENDS = frozenset({
    "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--json", "-F", "--form",
    "--form-string", "-T", "--upload-file",
})  # fmt: skip
_WGET_SENDS = frozenset({"--post-data", "--post-file", "--body-data", "--body-file"})
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True, slots=True)
class UrlUse:
    """A URL a call reached, where it is written, and whether data was sent to it."""

    url: str
    field: str | None
    """The argument holding it (None for a shell line: the caller knows the field)."""
    span: tuple[int, int] | None
    sends: bool = False


def url_identity(url: str) -> str | None:
    """The URL without fragment, scheme and host lower-cased; None when it is not one."""
    text = url.strip().rstrip(".,;:!?")
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def tool_urls(call: ToolCall, *, prompt: bool) -> list[UrlUse]:
    """URLs in a tool's URL arguments; with ``prompt``, else in its prompt (Gemini
    ``web_fetch`` takes the pages to read inside its prompt)."""
    found = [use for key in _URL_KEYS for use in _in_strings(call, f"arguments.{key}")]
    if not found and prompt:
        found = list(_in_strings(call, "arguments.prompt"))
    return found


def _in_strings(call: ToolCall, prefix: str) -> Iterator[UrlUse]:
    for field, value in argument_strings(call.arguments):
        if field != prefix and not field.startswith(prefix + "."):
            continue
        for match in _URL.finditer(value):
            url = match.group(0).rstrip(".,;:!?")
            yield UrlUse(url, field, (match.start(), match.start() + len(url)))


def shell_urls(commands: Sequence[SimpleCommand]) -> list[UrlUse]:
    """URLs named by ``curl``, ``wget`` and HTTPie commands of a line."""
    found: list[UrlUse] = []
    for command in commands:
        args = program_args(command)
        program = program_name(args)
        if program not in ("curl", "wget", "http", "https", "xh"):
            continue
        words = [a.text for a in args[1:]]
        sends = _sends(program, words)
        for arg in args[1:]:
            # The word is the URL (quotes removed), brackets and all.
            if _URL.match(arg.text) is not None:
                found.append(UrlUse(arg.text, None, arg.span, sends))
    return found


def _sends(program: str, words: list[str]) -> bool:
    names = {w.split("=", 1)[0] for w in words}
    if program == "curl":
        method = next(
            (words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-X", "--request")), "GET"
        )
        return bool(names & _CURL_SENDS) or method.upper() not in _READ_METHODS
    if program == "wget":
        return bool(names & _WGET_SENDS)
    method = next((w for w in words if w.isupper() and w.isalpha()), "GET")
    data = any(":=" in w or ("=" in w and "==" not in w) for w in words if not w.startswith("-"))
    return method not in _READ_METHODS or data
