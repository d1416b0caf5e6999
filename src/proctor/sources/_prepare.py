"""Make an adapter's bundle safe and bounded, then fingerprint it.

This is the one place every imported string passes through before storage, so the
guarantees hold for every format alike:

- inline reasoning blocks (``<thinking>…</thinking>``, ``<think>…</think>``) in agent
  text are removed (SPEC ING-3; structured reasoning blocks are dropped by adapters);
- secrets are redacted with a per-source count (ING-4);
- inline base64 payloads become placeholders, and tool outputs and huge messages are
  stored truncated with their original size (ING-5);
- every value gets its stored form, the same on SQLite and PostgreSQL (``_fit`` for
  ids, names, counts and times; ``transcript.storable`` for text and JSON: NUL and lone
  surrogates become U+FFFD, integers past 64 bits and ``NaN`` become text, nesting past
  ``MAX_STORED_DEPTH`` is cut);
- every source gets a version fingerprint and a content hash (ING-2).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from ahocorasick_rs import BytesAhoCorasick

from proctor.redaction import ANCHORS, Redactor
from proctor.sources._fit import NAME_CHARS, fit_bundle, fit_optional_label
from proctor.transcript import (
    MAX_STORED_DEPTH,
    TOO_DEEP,
    ConversationBundle,
    Message,
    PreparedBundle,
    PreparedSource,
    TaskEvent,
    ToolCall,
    Usage,
    canonical_time,
    clean_text,
    content_hash,
    json_key,
    message_fingerprint,
    normalise_text,
    replaced,
    storable,
    task_event_fingerprint,
    tool_call_fingerprint,
)


@dataclass(frozen=True, slots=True)
class Limits:
    """Storage bounds (SPEC ING-5)."""

    max_tool_output_chars: int = 65_536
    max_message_chars: int = 262_144
    max_argument_chars: int = 65_536
    max_attribute_chars: int = 4_096


_REASONING_TAGS = re.compile(r"<(think|thinking|reasoning)>[\s\S]*?</\1>\s*", re.IGNORECASE)
_DATA_URI = re.compile(r"data:([\w.+\-]+/[\w.+\-]+)?(?:;[\w=\-]+)*;base64,([A-Za-z0-9+/=]{64,})")
_RAW_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{2048,}={0,2}(?![A-Za-z0-9+/=])")


_BASE64_SHAPE = bytes(
    97 if chr(byte).isascii() and (chr(byte).isalnum() or byte in b"+/") else 32
    for byte in range(256)
)
"""UTF-8 bytes mapped to ``a`` for a character of ``[A-Za-z0-9+/]`` and to a blank for
any other (a byte of a non-ASCII character included)."""
_BASE64_RUN = b"a" * 2048
"""In a text mapped by ``_BASE64_SHAPE``: a run as long as ``_RAW_BASE64`` needs, without
its boundary tests (a superset). ``bytes.translate`` and a substring search are two C
passes, several times faster than the regular expression's scan of a long text."""
_NUL_ESCAPE = b"\\u0000"
_BLANK_ENDINGS = (
    b' "',
    b'\\t"',
    b'\\n"',
    b'\\r"',
    b'\\f"',
    b'\\u000b"',
    b'\\u001c"',
    b'\\u001d"',
    b'\\u001e"',
    b'\\u001f"',
)
"""What a JSON string (in orjson's escapes) ends with when it ends in a character
``str.rstrip`` removes: a space, a tab, a line feed, a carriage return, a form feed or
U+000B, U+001C–U+001F (``tests/sources/test_prepare_one_pass.py`` holds them equal to
the matches of the expression ``(?: |\\[tnrf]|\\u00(?:0b|1[c-f]))"``)."""
_MAY_CHANGE = BytesAhoCorasick(
    [anchor.encode() for anchor in ANCHORS] + [b"base64,", _NUL_ESCAPE, *_BLANK_ENDINGS]
)
"""What ``_kept_as_dumped`` looks for in the lower case of a serialised value, in one
pass (Rust's aho-corasick) instead of one substring search or scan each: a redaction
anchor (``Redactor.may_find``: redaction tries a pattern only where one occurs), a data
URI, a NUL, a string that ends in a blank (``_BLANK_ENDINGS``). The anchors are matched
case-blind; the other texts are in lower case, so lowering only adds matches (a string
ending in a backslash and ``T``), which send a value to the walk, never keep one from it.
A value that holds anchors and nothing else is kept still when redaction would try none of
their patterns in it (``Redactor.may_find_anchored``)."""
_ANCHOR_COUNT = len(ANCHORS)
"""The first patterns of ``_MAY_CHANGE`` are the anchors, in the order of ``ANCHORS``."""
_INT_MIN = -(2**63)
_INT_MAX = 2**63 - 1
"""The integers ``transcript.storable`` keeps as they are (64-bit signed)."""
_DIGIT_SHAPE = bytes(
    48 if 48 <= byte <= 57 else 123 if byte in (91, 123) else 120 for byte in range(256)
)
"""Bytes mapped to ``0`` for a digit, ``{`` for an opening bracket (``{`` and ``[``) and
``x`` for any other: one pass gives what the depth and the digit tests look for."""
_LONG_DIGITS = b"0" * 19
"""In a text mapped by ``_DIGIT_SHAPE``: nineteen digits, maybe an integer past 64-bit
signed, which is stored as its text."""


def _base64_run_in(data: bytes) -> bool:
    """True when ``data`` (UTF-8) holds a run of 2048 characters of ``[A-Za-z0-9+/]``."""
    return len(data) >= 2048 and _BASE64_RUN in data.translate(_BASE64_SHAPE)


_OWNED_DUMPS = (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
"""How ``_Sanitizer.owned_value`` serialises a value the import owns: a datetime, a
dataclass or a subclass of ``str``, ``int``, ``dict`` or ``list`` is not serialised (no
parser makes one), so such a value is prepared as a shared one is (``_Sanitizer.value``)."""


def _kept_as_dumped(dumped: bytes, limit: int) -> bool:
    """True when the value serialised (strictly) as ``dumped`` is stored as it is by
    ``_Sanitizer.value``, provided it parses back to an equal value (see ``_unchanged``).

    A few C passes tell most tool arguments and attributes: serialised (strict: string
    keys, integers within 64 bits, none of 19 digits or more), the text is ASCII (already
    NFC; keys plain), holds no base64 run, no string over ``limit``, no nesting as deep
    as ``MAX_STORED_DEPTH``, and (``_MAY_CHANGE``, one pass) no NUL, no data URI, no
    string with trailing blanks and no redaction anchor, or only anchors none of whose
    patterns redaction would try (``Redactor.may_find_anchored``)."""
    size = len(dumped)
    if size > limit or not dumped.isascii() or _base64_run_in(dumped):
        return False
    shape = dumped.translate(_DIGIT_SHAPE)
    if size >= 2 * MAX_STORED_DEPTH and shape.count(b"{") >= MAX_STORED_DEPTH:
        return False
    if _LONG_DIGITS in shape:
        return False
    matches = _MAY_CHANGE.find_matches_as_indexes(dumped.lower(), overlapping=True)
    if not matches:
        return True
    if any(number >= _ANCHOR_COUNT for number, _, _ in matches):
        return False
    # Only anchors ("token" in "max_tokens", "://" in a URL): redaction may still try
    # none of their patterns (one with ``_EXACT`` parts needs them too).
    found = {ANCHORS[number] for number, _, _ in matches}
    return not Redactor.may_find_anchored(found, dumped)


def _unchanged(value: Any, limit: int) -> Any:
    """A copy of a parsed JSON object or list that ``_Sanitizer.value`` would store as it
    is, or None when it may change anything (then it is walked value by value).

    Serialised, its text passes ``_kept_as_dumped``; parsed back, it equals the value
    (``NaN`` and infinities, written as ``null``, do not)."""
    try:
        dumped = orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        return None
    if not _kept_as_dumped(dumped, limit):
        return None
    copy = orjson.loads(dumped)
    return copy if copy == value else None


def _placeholder_for_data_uri(match: re.Match[str]) -> str:
    media_type = match.group(1) or "application/octet-stream"
    return f"[{media_type} data, {len(match.group(2)) * 3 // 4} bytes]"


def _placeholder_for_base64(match: re.Match[str]) -> str:
    run = match.group(0)
    sample = run[:4096]
    # Real base64 mixes cases and digits; a long run of one letter or a word is not data.
    if not (
        any(c.isdigit() for c in sample)
        and any(c.isupper() for c in sample)
        and any(c.islower() for c in sample)
    ):
        return run
    return f"[base64 data, {len(run) * 3 // 4} bytes]"


def _usage_tuple(usage: Usage | None) -> tuple[int, ...] | None:
    if usage is None:
        return None
    return (
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.reasoning_tokens,
    )


def bound_text(text: str, limit: int) -> tuple[str, int | None]:
    """Keep the head and the tail of an oversized text; return it and the original length."""
    if len(text) <= limit:
        return text, None
    tail = limit // 8
    head = limit - tail
    omitted = len(text) - head - tail
    return f"{text[:head]}\n…[{omitted} characters omitted]…\n{text[-tail:]}", len(text)


def _plain_key(key: str) -> bool:
    """True for a key ``json_key`` keeps as it is (ASCII without NUL: most keys)."""
    return key.isascii() and "\x00" not in key


_FLAT_MAX_ITEMS = 16
"""The most items of an object ``_flat`` tells (more: ``_unchanged`` serves it better)."""
_FLAT_MAX_TEXTS = 2
"""The most strings of eight characters or more in a ``_flat`` object: each is one
``_Sanitizer.text`` when walked, where ``_unchanged`` scans them all in one pass."""


def _flat(value: dict[Any, Any]) -> bool:
    """True for a small object that ``_Sanitizer.value`` stores with every key as it is
    and every value a string, ``None``, a boolean or an integer within 64 bits (stored as
    it is), with at most ``_FLAT_MAX_TEXTS`` strings long enough to need
    ``_Sanitizer.text``: its walk is written out in ``_Sanitizer.attributes``."""
    if len(value) > _FLAT_MAX_ITEMS:
        return False
    texts = 0
    for key, item in value.items():
        if type(key) is not str or not _plain_key(key):
            return False
        kind = type(item)
        if kind is str:
            if len(item) >= 8 or not item.isascii() or "\x00" in item:
                texts += 1
                if texts > _FLAT_MAX_TEXTS:
                    return False
        elif not (item is None or kind is bool or (kind is int and _INT_MIN <= item <= _INT_MAX)):
            return False
    return True


class _Sanitizer:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.redactor = Redactor()
        self.truncated = 0
        self.reasoning_removed = 0

    def text(self, text: str, limit: int) -> tuple[str, int | None]:
        """``text`` in its stored form (clean, placeholders for inline data, redacted,
        bounded to ``limit``, normalised) and its length before the bound (None when it
        fits)."""
        if len(text) < 2048 and text.isascii() and "\x00" not in text and "base64," not in text:
            # Most texts: ``clean_text`` keeps them, and no placeholder fits them (a data
            # URI holds ``base64,``, a base64 run is 2048 characters long).
            text = self.redactor.redact(text)
        else:
            text = clean_text(text)
            if "base64," in text:
                text = _DATA_URI.sub(_placeholder_for_data_uri, text)
            utf8 = None
            if len(text) >= 2048:
                utf8 = text.encode("utf-8", "surrogatepass")  # redaction's too
                if _base64_run_in(utf8) and _RAW_BASE64.search(text):
                    text = _RAW_BASE64.sub(_placeholder_for_base64, text)
                    utf8 = None
            text = self.redactor.redact(text, utf8)
        if len(text) <= limit:
            return normalise_text(text), None
        bounded, original = bound_text(text, limit)
        self.truncated += 1
        return normalise_text(bounded), original

    def agent_text(self, text: str) -> str:
        if "<" in text:
            stripped, removed = _REASONING_TAGS.subn("", text)
            if removed:
                self.reasoning_removed += removed
                text = stripped
        return text

    def owned_value(self, value: Any, limit: int) -> Any:
        """``value`` for a JSON value the import parsed and nobody else holds
        (``prepare_imported_bundle``'s tool arguments): the same stored form.

        ``_unchanged``'s test, but a value stored as it is is returned itself when its
        text holds no ``null`` (a ``NaN`` or an infinity is written so): the copy and the
        comparison are what a value shared with a caller needs, and a parsed value's copy
        equals it (the stored text is the same either way: the store binds JSON by
        orjson, which writes a tuple, which no parser makes, as the list it would
        become). A value the test cannot keep is walked at once: serialised (no type
        passed through, ``_OWNED_DUMPS``), it is the text ``_unchanged`` would test again
        and find the same in."""
        kind = type(value)
        if (kind is dict or kind is list) and value:
            try:
                dumped = orjson.dumps(value, option=_OWNED_DUMPS)
            except (orjson.JSONEncodeError, TypeError):
                return self.value(value, limit)
            if _kept_as_dumped(dumped, limit):
                if b"null" not in dumped:
                    return value
                copy = orjson.loads(dumped)
                if copy == value:
                    return copy
            return self._walk(value, limit, 0)
        return self.value(value, limit)

    def value(self, value: Any, limit: int) -> Any:
        """A JSON value redacted, bounded and in its stored form (``transcript.storable``)."""
        kind = type(value)
        if (kind is dict or kind is list) and value:
            copy = _unchanged(value, limit)
            if copy is not None:
                return copy
        return self._walk(value, limit, 0)

    def _walk(self, value: Any, limit: int, depth: int) -> Any:
        """``value`` walked value by value, ``depth`` levels down."""
        kind = type(value)
        if kind is dict:  # what parsed JSON holds: no ABC check on the hot path
            if depth >= MAX_STORED_DEPTH:
                return TOO_DEEP
            return {
                k if type(k) is str and _plain_key(k) else json_key(k): self._walk(
                    v, limit, depth + 1
                )
                for k, v in value.items()
            }
        if kind is list:
            if depth >= MAX_STORED_DEPTH:
                return TOO_DEEP
            return [self._walk(v, limit, depth + 1) for v in value]
        if isinstance(value, str):
            if len(value) < 8 and value.isascii() and "\x00" not in value:
                return value.rstrip()  # too short for a secret; already NFC
            return self.text(value, limit)[0]
        if isinstance(value, Mapping):
            if depth >= MAX_STORED_DEPTH:
                return TOO_DEEP
            return {json_key(k): self._walk(v, limit, depth + 1) for k, v in value.items()}
        if isinstance(value, list | tuple):
            if depth >= MAX_STORED_DEPTH:
                return TOO_DEEP
            return [self._walk(v, limit, depth + 1) for v in value]
        return storable(value)

    def attributes(self, attributes: Mapping[str, Any]) -> dict[str, Any]:
        if not attributes:
            return {}
        limit = self.limits.max_attribute_chars
        if type(attributes) is dict and _flat(attributes):
            # ``value``'s walk of the object, its scalars inline: for a small flat object
            # (most attributes: a request id, a few flags and counts) cheaper than
            # ``_unchanged``'s serialise, scan, parse back and compare.
            return {
                key: (
                    item
                    if type(item) is not str
                    else item.rstrip()
                    if len(item) < 8 and item.isascii() and "\x00" not in item
                    else self.text(item, limit)[0]
                )
                for key, item in attributes.items()
            }
        cleaned: dict[str, Any] = self.value(attributes, limit)
        return cleaned


def _same_attributes(cleaned: dict[str, Any], given: Mapping[str, Any]) -> bool:
    """True when ``cleaned`` (``_Sanitizer.attributes`` of ``given``) stores as ``given``
    does: then an imported source (``prepare_imported_bundle``) keeps its object instead
    of a copy with equal fields (``replaced``; the rows copy the attributes anyway).

    Equal is enough: cleaning keeps every key's place and never turns a value into
    another type that compares equal to it (a number stays the number it was, an integer
    past 64 bits becomes text, ``NaN`` compares unequal to everything)."""
    return type(given) is dict and cleaned == given


def _title_from_first_prompt(messages: list[Message], limit: int = 80) -> str | None:
    """A title for formats that record none: the first line of the first typed prompt."""
    for message in messages:
        if message.kind == "prompt" and message.text.strip():
            line = message.text.strip().splitlines()[0].strip()
            return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return None


def prepare_bundle(bundle: ConversationBundle, limits: Limits | None = None) -> PreparedBundle:
    """Redact, bound and fingerprint every source of ``bundle``.

    The prepared bundle shares no JSON value with ``bundle``: a value stored as it is
    comes back as a copy."""
    return _prepare(bundle, limits, owned=False)


def prepare_imported_bundle(
    bundle: ConversationBundle, limits: Limits | None = None
) -> PreparedBundle:
    """``prepare_bundle`` for the import path only, of a bundle an adapter has just read
    from a file and nobody else holds: tool arguments stored as they are keep the parsed
    objects instead of a copy (``_unchanged``'s ``owned``). The same stored rows."""
    return _prepare(bundle, limits, owned=True)


def _prepare(bundle: ConversationBundle, limits: Limits | None, *, owned: bool) -> PreparedBundle:
    """``prepare_bundle``; ``owned``: the bundle's tool arguments may be kept uncopied."""
    limits = limits or Limits()
    clean = _Sanitizer(limits)
    bundle = fit_bundle(bundle)
    conversation_id = bundle.conversation_id
    sources: list[PreparedSource] = []

    def counted(before: int) -> int:
        return clean.redactor.total - before

    messages: list[Message] = []
    for message in bundle.messages:
        before = clean.redactor.total
        text = clean.agent_text(message.text) if message.role == "assistant" else message.text
        text, original = clean.text(text, limits.max_message_chars)
        attributes = clean.attributes(message.attributes)
        if original is not None:
            attributes["original_chars"] = original
        author = fit_optional_label(
            None if message.author is None else clean.redactor.redact(message.author),
            NAME_CHARS,
        )
        if not (
            owned
            and text is message.text
            and author is message.author
            and _same_attributes(attributes, message.attributes)
        ):
            message = replaced(message, text=text, author=author, attributes=attributes)
        messages.append(message)
        fingerprint = message_fingerprint(message, conversation_id, normalised=True)
        sources.append(
            PreparedSource(
                "message",
                message.source_id,
                fingerprint,
                content_hash(
                    fingerprint,
                    message.parent_source_id,
                    message.on_active_branch,
                    message.derived,
                    message.model,
                    _usage_tuple(message.usage),
                    attributes=attributes,
                ),
                counted(before),
            )
        )

    tool_calls: list[ToolCall] = []
    for call in bundle.tool_calls:
        before = clean.redactor.total
        arguments = (
            clean.owned_value(call.arguments, limits.max_argument_chars)
            if owned
            else clean.value(call.arguments, limits.max_argument_chars)
        )
        result_text, original = (None, None)
        if call.result_text is not None:
            result_text, original = clean.text(call.result_text, limits.max_tool_output_chars)
        attributes = clean.attributes(call.attributes)
        if not (
            owned
            and arguments is call.arguments
            and result_text is call.result_text
            and original is None
            and _same_attributes(attributes, call.attributes)
        ):
            call = replaced(
                call,
                arguments=arguments,
                result_text=result_text,
                result_size=original if original is not None else call.result_size,
                attributes=attributes,
            )
        tool_calls.append(call)
        fingerprint = tool_call_fingerprint(call, conversation_id, normalised=True)
        sources.append(
            PreparedSource(
                "tool_call",
                call.source_id,
                fingerprint,
                content_hash(
                    fingerprint,
                    call.call_id,
                    call.message_source_id,
                    call.on_active_branch,
                    canonical_time(call.completed_at),
                    attributes=call.attributes,
                ),
                counted(before),
            )
        )

    task_events: list[TaskEvent] = []
    for event in bundle.task_events:
        before = clean.redactor.total
        text, _ = clean.text(event.text, limits.max_message_chars)
        event = replaced(event, text=text, attributes=clean.attributes(event.attributes))
        task_events.append(event)
        fingerprint = task_event_fingerprint(event, conversation_id, normalised=True)
        sources.append(
            PreparedSource(
                "task_event",
                event.source_id,
                fingerprint,
                content_hash(fingerprint, attributes=event.attributes),
                counted(before),
            )
        )

    tasks = tuple(
        replaced(
            task,
            title=clean.text(task.title, limits.max_attribute_chars)[0],
            goal=None if task.goal is None else clean.text(task.goal, limits.max_message_chars)[0],
            attributes=clean.attributes(task.attributes),
        )
        for task in bundle.tasks
    )
    conversation = bundle.conversation
    title = conversation.title or _title_from_first_prompt(messages)
    conversation = replaced(
        conversation,
        title=None if title is None else clean.text(title, limits.max_attribute_chars)[0],
        cwd=None if conversation.cwd is None else clean.redactor.redact(conversation.cwd),
        attributes=clean.attributes(conversation.attributes),
    )
    run = bundle.subagent_run
    if run is not None:
        run = replaced(
            run,
            description=None if run.description is None else clean.text(run.description, 4096)[0],
            summary=None
            if run.summary is None
            else clean.text(run.summary, limits.max_message_chars)[0],
        )
    prepared = replaced(
        bundle,
        conversation=conversation,
        messages=tuple(messages),
        tool_calls=tuple(tool_calls),
        tasks=tasks,
        task_events=tuple(task_events),
        subagent_run=run,
    )
    return PreparedBundle(
        bundle=prepared,
        sources=tuple(sources),
        redactions=clean.redactor.total,
        redactions_by_kind=dict(clean.redactor.counts),
        truncated=clean.truncated,
        reasoning_removed=clean.reasoning_removed,
    )
