"""Helpers shared by the message-format adapters, kept generic so any adapter can use them:
reading JSON documents and JSON Lines; ISO and epoch times; tool arguments (objects, JSON
strings, double-encoded or broken); placeholders for binary parts (SPEC ING-5); content
keys for formats without ids; pairing calls with results; repeated request histories.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any
from weakref import WeakKeyDictionary

import orjson

from proctor.errors import SourceError
from proctor.sources._files import JSONProblem, iter_jsonl, load_json_document, parse_json
from proctor.sources._source import KEEP_DOCUMENT_BYTES, MAX_SNIFF_DOCUMENT_BYTES, ReadUnit, Sample
from proctor.transcript import JSONValue, SourceIssue, ToolCall, ToolStatus, canonical_json


@dataclass(frozen=True, slots=True)
class Record:
    """One top-level value of an input file: the whole JSON document, or one JSONL line."""

    value: Any
    line: int | None = None
    """1-based line number for JSON Lines records; None for a JSON document."""


_DOCUMENTS: WeakKeyDictionary[Sample, Any] = WeakKeyDictionary()
"""Documents parsed for detection where ``Sample.document`` skipped them (small ones kept)."""


def _parsed_document(sample: Sample) -> Any:
    if sample in _DOCUMENTS:
        return _DOCUMENTS[sample]
    size = sample.path.stat().st_size
    try:
        document = None if size > MAX_SNIFF_DOCUMENT_BYTES else load_json_document(sample.path)
    except SourceError:
        document = None
    if size <= KEEP_DOCUMENT_BYTES:  # as ``Sample.compact`` does, keep only small documents
        _DOCUMENTS[sample] = document
    return document


def is_json_lines(sample: Sample) -> bool:
    """``Sample.is_jsonl``, minus pretty-printed documents holding one-line objects (a torn
    first line still counts as JSON Lines when the file is not one whole document)."""
    if not sample.is_jsonl:
        return False
    try:
        if isinstance(orjson.loads(sample.head.lstrip().split(b"\n", 1)[0]), dict):
            return True
    except orjson.JSONDecodeError:
        pass
    return _parsed_document(sample) is None


def sample_document(sample: Sample) -> Any:
    """``Sample.document``, also for pretty-printed documents it skips as JSON Lines."""
    if sample.document is not None or sample.text_start not in ("{", "["):
        return sample.document
    return None if is_json_lines(sample) else _parsed_document(sample)


def iter_records(unit: ReadUnit) -> Iterator[Record | SourceIssue]:
    """A JSON document as one record, JSON Lines as one per line; bad input as issues."""
    if is_json_lines(unit.sample or Sample(unit.path)):
        for item in iter_jsonl(unit.path):
            yield item if isinstance(item, SourceIssue) else Record(item[1], item[0])
        return
    try:
        yield Record(load_json_document(unit.path))
    except SourceError as exc:
        yield SourceIssue(str(unit.path), exc.reason, exc.line)


def json_type_name(value: Any) -> str:
    """A JSON value's type in words, for issue messages: ``an array``, ``a string`` …"""
    if value is None:
        return "null"
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)


_JSON_TYPE_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
_JSON_TYPE_NAMES |= {int: "a number", float: "a number"}


def parse_time(value: Any) -> datetime | None:
    """A UTC time from an ISO-8601 string (naive means UTC) or epoch seconds, milliseconds or
    microseconds (formats disagree, even within one file); None when unreadable."""
    if isinstance(value, str):
        text = value.strip()
        if text.replace(".", "", 1).isdigit():
            return parse_time(float(text))
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return None
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
        # Milliseconds and microseconds are too large to be seconds of this era.
        seconds /= 1_000_000 if seconds > 1e14 else 1000 if seconds > 1e11 else 1
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def as_object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (for tolerant field access)."""
    return value if isinstance(value, dict) else {}


def mostly(items: Sequence[Any], test: Callable[[Any], bool], keys: frozenset[str]) -> bool:
    """True when one of ``items`` passes ``test`` and every other one is a damaged record
    of the format (an object with one of its ``keys``): damaged records must not hide the
    format of a file, and a record of another shape (another tool's header line) still
    tells the file is not in it."""
    passed = False
    for item in items:
        if test(item):
            passed = True
        elif not isinstance(item, dict) or (item and keys.isdisjoint(item)):
            return False  # an empty object says nothing either way
    return passed


def named(value: Any, names: Collection[str]) -> bool:
    """True when ``value`` is one of ``names`` (a list or object never is: no TypeError)."""
    return isinstance(value, str) and value in names


def as_text(value: Any) -> str | None:
    """``value`` when it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def as_count(value: Any) -> int:
    """A non-negative token count from a JSON value; anything else counts as 0."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    return int(value) if ok and math.isfinite(value) else 0


def content_digest(*parts: Any) -> str:
    """A short stable hash of JSON-compatible values: the key for content without ids."""
    data = canonical_json(parts).encode()
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def join_text(pieces: Iterable[str | None]) -> str:
    """Join visible text pieces with blank lines, skipping empty ones."""
    return "\n\n".join(p for p in pieces if p and p.strip())


HIDDEN_KEYS = frozenset({"encrypted_content", "encrypted_index", "signature", "thoughtSignature"})
HIDDEN_KEYS |= {"thought_signature", "reasoning_content", "reasoning_details"}
"""Keys that hold hidden or encrypted reasoning in some format (SPEC ING-3)."""


def without_hidden(value: Any) -> Any:
    """A copy of a JSON value without the keys that carry hidden reasoning (``HIDDEN_KEYS``)."""
    if isinstance(value, dict):
        return {k: without_hidden(v) for k, v in value.items() if k not in HIDDEN_KEYS}
    if isinstance(value, list):
        return [without_hidden(v) for v in value]
    return value


def render_value(value: Any) -> str:
    """Visible text of a JSON value: strings as they are, else compact JSON minus hidden keys."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return canonical_json(without_hidden(value))


@dataclass(frozen=True, slots=True)
class ParsedArguments:
    """Tool arguments after parsing, with what (if anything) was wrong with them."""

    value: JSONValue
    problem: str | None = None
    """Why the arguments were kept as raw text (invalid JSON), for a warning."""
    double_encoded: bool = False
    """True when the arguments were a JSON string inside a JSON string."""


def parse_arguments(raw: Any) -> ParsedArguments:
    """Parse arguments given as an object, a JSON string or a double-encoded JSON string;
    invalid JSON stays raw text with a ``problem`` (it is evidence); missing means ``{}``."""
    if raw is None:
        return ParsedArguments({})
    if not isinstance(raw, str):
        return ParsedArguments(raw)
    if not raw.strip():
        return ParsedArguments({})
    try:
        value = parse_json(raw.encode("utf-8", "surrogatepass"))
    except JSONProblem as exc:
        reason = exc.reason if exc.position is None else exc.reason.split(" at column")[0]
        return ParsedArguments(raw, f"arguments are not valid JSON ({reason}); kept as text")
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            inner = parse_json(value.encode("utf-8", "surrogatepass"))
        except JSONProblem:
            return ParsedArguments(value)
        return ParsedArguments(inner, double_encoded=True)
    return ParsedArguments(value)


_DATA_URI = re.compile(r"^data:([^;,]*)(?:;[^,]*)?,", re.IGNORECASE)


def base64_size(data: str) -> int:
    """Decoded size in bytes of base64 text, computed without decoding it."""
    compact = "".join(data.split())
    return max(0, len(compact) * 3 // 4 - compact[-2:].count("="))


def media_placeholder(media_type: str | None, *, size: int | None = None, where: str = "") -> str:
    """Text standing in for binary content, e.g. ``[image: image/png, 12345 bytes]``."""
    kind = "file"
    if media_type and media_type.split("/")[0] in ("image", "audio", "video"):
        kind = media_type.split("/")[0]
    details = [d for d in (media_type, None if size is None else f"{size} bytes", where) if d]
    return f"[{kind}: {', '.join(details)}]" if details else f"[{kind}]"


def url_placeholder(url: str, *, media_type: str | None = None) -> str:
    """Placeholder for media given by URL: data URIs lose their payload, other URLs stay."""
    match = _DATA_URI.match(url)
    if match is None:
        return media_placeholder(media_type or "image/*", where=url[:300])
    payload = url[match.end() :]
    size = base64_size(payload) if ";base64" in url[: match.end()].lower() else len(payload)
    return media_placeholder(match.group(1) or media_type, size=size)


class CallLedger:
    """Pairs tool calls with results by call id (or tool name); a result with no call is kept
    as a call named ``unknown``, since it is evidence. Adapters warn on the False returns."""

    def __init__(self) -> None:
        self._calls: dict[str, ToolCall] = {}
        self._by_call_id: dict[str, list[str]] = {}
        self._completed: set[str] = set()

    def issue(self, call: ToolCall, *, completed: bool = False) -> bool:
        """Record a call (``completed`` when it carries its result); False for a duplicate."""
        if call.source_id in self._calls:
            return False
        self._calls[call.source_id] = call
        if completed:
            self._completed.add(call.source_id)
        if call.call_id:  # some models reuse a call id in a later turn: keep both calls
            self._by_call_id.setdefault(call.call_id, []).append(call.source_id)
        return True

    def source_id_for(self, by_call_id: str | None, by_position: str) -> str:
        """``by_call_id`` unless there is none or it is taken (a reused call id)."""
        return by_call_id if by_call_id and by_call_id not in self._calls else by_position

    def find(self, call_id: str | None) -> str | None:
        """Source id of the oldest open call issued with ``call_id`` (else the latest one)."""
        issued = self._by_call_id.get(call_id or "", [])
        return next((i for i in issued if i not in self._completed), issued[-1] if issued else None)

    def first_open(self, name: str | None) -> str | None:
        """Source id of the oldest call still waiting for a result (with ``name``, if given)."""
        for source_id, call in self._calls.items():
            if source_id not in self._completed and name in (None, call.name):
                return source_id
        return None

    def complete(self, source_id: str, text: str, status: ToolStatus = "ok", **more: Any) -> bool:
        """Attach a result (and other ``ToolCall`` fields); False when the call has one."""
        if source_id in self._completed or source_id not in self._calls:
            return False
        self._completed.add(source_id)
        call = replace(self._calls[source_id], result_text=text, status=status, **more)
        self._calls[source_id] = call
        return True

    def orphan(
        self, source_id: str, text: str, *, name: str | None, status: ToolStatus, **more: Any
    ) -> None:
        """Keep a result whose call was never seen, as a completed call of unknown name."""
        attributes = {"orphan_result": True}
        self.issue(ToolCall(source_id, name or "unknown", {}, attributes=attributes, **more))
        self.complete(source_id, text, status, completed_at=more.get("created_at"))

    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Every call, in the order issued."""
        return tuple(self._calls.values())


class HistoryDeduper:
    """Tells which messages of a re-sent history are new, so each is imported once: a content
    key seen ``n`` times so far is new only from its ``n+1``-th occurrence in one history,
    so a message said twice ("continue") stays twice and front-trimmed histories line up.
    """

    def __init__(self) -> None:
        self._seen: Counter[str] = Counter()

    def fresh(self, keys: Sequence[str]) -> list[int]:
        """Positions in ``keys`` (one history) that were not imported before; remembers them."""
        counts: Counter[str] = Counter()
        positions = []
        for position, key in enumerate(keys):
            counts[key] += 1
            if counts[key] > self._seen[key]:
                positions.append(position)
        for key, count in counts.items():
            self._seen[key] = max(self._seen[key], count)
        return positions

    def add(self, key: str) -> None:
        """Remember a message received outside a history (a model response)."""
        self._seen[key] += 1


@dataclass(frozen=True, slots=True)
class Located:
    """A value inside a record, with where it was found (for precise issues)."""

    value: Any
    path: str
    """Where in its record, e.g. ``messages[3]`` or ``choices[0]``; '' for the whole record."""
    line: int | None = None

    def issue(self, file: str, reason: str, *, warning: bool = False) -> SourceIssue:
        """An issue about this value naming the file, line and path."""
        where = f"{self.path}: " if self.path else ""
        return SourceIssue(file, f"{where}{reason}", self.line, "warning" if warning else "error")


@dataclass(slots=True)
class Exchange:
    """One logged model call, or a bare message list: the history sent and what came back."""

    record: Record
    sent: list[Located] = field(default_factory=list)
    """The history sent (request messages or input items)."""
    received: list[Located] = field(default_factory=list)
    """The model's output (choices, output items, a response message)."""
    request: dict[str, Any] = field(default_factory=dict)
    response: dict[str, Any] = field(default_factory=dict)
    sent_keys: list[str] = field(default_factory=list)
    """Content keys of ``sent``: how repeated histories are recognised."""
    position: int = 0
    """Order among the file's exchanges (set by ``group_exchanges``)."""

    @property
    def response_id(self) -> str | None:
        """The response's own id (``chatcmpl-…``, ``resp_…``, ``msg_…``) when it has one."""
        return as_text(self.response.get("id"))

    @property
    def follows(self) -> str | None:
        """The ``previous_response_id`` this exchange continues, when it names one."""
        return as_text(self.request.get("previous_response_id")) or as_text(
            self.response.get("previous_response_id")
        )


def group_exchanges(exchanges: Sequence[Exchange]) -> list[list[Exchange]]:
    """Split a file's exchanges into conversations, keeping file order within each.

    A request continues the conversation whose last request is a prefix of its history
    (requests repeat the conversation so far); one naming ``previous_response_id`` joins
    that response; a response logged alone joins the unanswered request just before it.
    """
    groups: list[list[Exchange]] = []
    by_response: dict[str, list[Exchange]] = {}
    for position, exchange in enumerate(exchanges):
        exchange.position = position
        group: list[Exchange] | None = by_response.get(exchange.follows or "")
        if group is None and exchange.sent_keys:
            keys = exchange.sent_keys
            group = next((g for g in reversed(groups) if _extends(keys, _last_sent(g))), None)
        elif group is None and groups and not groups[-1][-1].received and groups[-1][-1].sent:
            group = groups[-1]
        if group is None:
            groups.append(group := [])
        group.append(exchange)
        if exchange.response_id:
            by_response[exchange.response_id] = group
    return groups


def _extends(keys: Sequence[str], earlier: Sequence[str]) -> bool:
    return bool(earlier) and list(keys[: len(earlier)]) == list(earlier)


def _last_sent(group: Sequence[Exchange]) -> list[str]:
    return next((e.sent_keys for e in reversed(group) if e.sent_keys), [])


def conversation_key(group: Sequence[Exchange]) -> str:
    """A stable key for a conversation without an id: the response id for a lone response,
    else a hash of the first history's opening messages (of a lone response's output when
    there is no history) and its position in the file; never the file path, so the same
    file read from elsewhere gets the same ids.
    """
    first = group[0]
    if not first.request and first.response_id:
        return first.response_id
    if not first.sent_keys:  # a lone response without an id: what it says is its key
        return content_digest(first.position, [item.value for item in first.received[:4]])
    return content_digest(first.position, first.sent_keys[:4])
