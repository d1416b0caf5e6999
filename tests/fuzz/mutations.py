"""Ways to break one record of a real file, each as a pure function of a seeded random.

A mutation changes one top-level record (a JSON Lines line, or one element of a JSON
document) in one of the ways real files break or attackers try: numbers JSON parsers
disagree on, non-JSON literals, nesting past every parser's comfort, characters that
databases refuse, byte damage, and values of the wrong JSON type.

``value`` mutations return a new record (written back as JSON); ``line`` mutations return
the new bytes of the line itself. Both are deterministic for a given ``random.Random``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

JSONPath = tuple[str | int, ...]

HUGE = 2**127 + 12345
"""An integer far past 64 bits (the first reported crash was a 128-bit number)."""

WRONG_VALUES: tuple[Any, ...] = (
    "",
    [],
    ["a", 1],
    [[1, 2], {"k": []}],
    {},
    {"unexpected": ["shape"]},
    True,
    False,
    None,
)
"""Values of every JSON type, put where the format expects another one (numbers and
strings are drawn per mutation: a changed id must not become another case's id)."""


def paths(value: Any, prefix: JSONPath = ()) -> list[JSONPath]:
    """Every path inside ``value`` (objects and arrays walked), the root excluded."""
    found: list[JSONPath] = []
    stack: list[tuple[Any, JSONPath]] = [(value, prefix)]
    while stack:
        node, where = stack.pop()
        children: list[tuple[str | int, Any]] = []
        if isinstance(node, dict):
            children = list(node.items())
        elif isinstance(node, list):
            children = list(enumerate(node))
        for key, child in children:
            found.append((*where, key))
            stack.append((child, (*where, key)))
    return sorted(found, key=lambda p: [str(part) for part in p])


def get(value: Any, path: JSONPath) -> Any:
    """The value at ``path``."""
    for part in path:
        value = value[part]
    return value


def put(value: Any, path: JSONPath, new: Any) -> Any:
    """A copy of ``value`` with ``path`` replaced by ``new``."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
        copy[head] = put(value[head], rest, new)
        return copy
    items = list(value)
    items[int(head)] = put(value[int(head)], rest, new)
    return items


def nested(depth: int, leaf: Any = "bottom") -> Any:
    """A value ``depth`` levels deep, alternating objects and arrays."""
    value = leaf
    for level in range(depth):
        value = {"k": value} if level % 2 else [value]
    return value


def _pick_path(
    rng: random.Random, record: Any, *, strings: bool = False, names: bool = True
) -> JSONPath:
    candidates = paths(record)
    if strings:
        candidates = [p for p in candidates if isinstance(get(record, p), str)]
    if not names:
        # OTLP writes attribute names as values (``{"key": "gen_ai.prompt", "value": …}``):
        # a changed name is a valid attribute nobody reads, like a missing field of a
        # format that ignores unknown fields, not damage a reader can notice.
        candidates = [p for p in candidates if not (p and p[-1] == "key")]
    if not candidates:
        return ()
    return rng.choice(candidates)


def _string_with(rng: random.Random, record: Any, insert: str) -> Any:
    path = _pick_path(rng, record, strings=True, names=False)
    if not path:
        return put(record, ("injected",), f"a{insert}b") if isinstance(record, dict) else record
    text = get(record, path)
    at = rng.randint(0, len(text))
    return put(record, path, text[:at] + insert + text[at:])


ValueMutation = Callable[[random.Random, Any], Any]
LineMutation = Callable[[random.Random, bytes], bytes]


def huge_integer(rng: random.Random, record: Any) -> Any:
    """A number (or any value) becomes an integer past 64 bits, positive or negative
    (one of its own: a changed id must not become another record's id)."""
    base = rng.choice([HUGE, -HUGE, 2**64, -(2**63) - 1, 10**40])
    number = base + rng.randrange(10**9) if base > 0 else base - rng.randrange(10**9)
    return put(record, _pick_path(rng, record), number)


def deep_nesting(rng: random.Random, record: Any) -> Any:
    """A value becomes a structure nested hundreds of levels deep."""
    return put(record, _pick_path(rng, record), nested(rng.choice([150, 300, 900])))


def nul_character(rng: random.Random, record: Any) -> Any:
    """A NUL character inside a string (PostgreSQL text refuses it)."""
    return _string_with(rng, record, "\x00")


def lone_surrogate(rng: random.Random, record: Any) -> Any:
    """A lone UTF-16 surrogate inside a string (written as a ``\\ud83d`` escape)."""
    return _string_with(rng, record, rng.choice(["\ud83d", "\udc00", "x\udfff"]))


def long_string(rng: random.Random, record: Any) -> Any:
    """A value becomes a string of a few hundred thousand characters."""
    # Unique per mutation: two records given the same long id are one record by design.
    word = f"long{rng.randrange(10**6)} "
    size = rng.choice([300_000, 600_000]) // len(word)
    return put(record, _pick_path(rng, record, names=False), word * size)


def _wrong_value(rng: random.Random) -> Any:
    """A value of any JSON type; strings are unique, as a changed id must not become
    another record's id (two records with one id are one record by design)."""
    token = rng.randrange(1, 10**9)
    numbers = [token, -token, token + 0.5, HUGE + token]
    return rng.choice([*WRONG_VALUES, f"wrong {token}", f"\x00{token}", *numbers])


def wrong_type(rng: random.Random, record: Any) -> Any:
    """A value becomes one of another JSON type (a string for an object, a list for a role …)."""
    return put(record, _pick_path(rng, record, names=False), _wrong_value(rng))


def wrong_record_type(rng: random.Random, record: Any) -> Any:
    """The whole record becomes a value of another type."""
    value = _wrong_value(rng)
    return value if not isinstance(value, dict) else [value]


def missing_field(rng: random.Random, record: Any) -> Any:
    """A key of an object is removed."""
    path = _pick_path(rng, record)
    if not path:
        return record
    parent = get(record, path[:-1])
    if isinstance(parent, dict):
        return put(record, path[:-1], {k: v for k, v in parent.items() if k != path[-1]})
    return put(record, path[:-1], [v for i, v in enumerate(parent) if i != path[-1]])


def unquoted_hex(rng: random.Random, line: bytes) -> bytes:
    """A value is replaced by an unquoted hex number (``0x8f3a…``), which is not JSON."""
    hexa = b"0x8f3a" + bytes(rng.choice(b"0123456789abcdef") for _ in range(26))
    return _replace_value(rng, line, hexa)


def nan_or_infinity(rng: random.Random, line: bytes) -> bytes:
    """A value is replaced by ``NaN``, ``Infinity`` or ``-Infinity`` (Python writes them)."""
    return _replace_value(rng, line, rng.choice([b"NaN", b"Infinity", b"-Infinity"]))


def byte_order_mark(rng: random.Random, line: bytes) -> bytes:
    """The line starts with a UTF-8 byte order mark."""
    return b"\xef\xbb\xbf" + line


def truncation(rng: random.Random, line: bytes) -> bytes:
    """The line is cut short at a random byte (one byte at least is left: a blank line is
    no record)."""
    return line[: rng.randint(1, max(1, len(line) - 1))]


def garbage_bytes(rng: random.Random, line: bytes) -> bytes:
    """Random bytes (invalid UTF-8, control characters) are written into the line."""
    at = rng.randint(0, len(line))
    junk = bytes(rng.randint(0, 255) for _ in range(rng.randint(1, 12)))
    return line[:at] + junk.replace(b"\n", b"\xff") + line[at:]


def _replace_value(rng: random.Random, line: bytes, new: bytes) -> bytes:
    """``line`` with the text of one scalar value (after a ``:``) replaced by ``new``."""
    starts = [i + 1 for i in range(len(line) - 1) if line[i : i + 1] == b":"]
    if not starts:
        return new
    start = rng.choice(starts)
    while start < len(line) and line[start : start + 1] == b" ":
        start += 1
    end = start
    if line[end : end + 1] == b'"':
        end += 1
        while end < len(line) and line[end : end + 1] != b'"':
            end += 2 if line[end : end + 1] == b"\\" else 1
        end += 1
    else:
        while end < len(line) and line[end : end + 1] not in b",}]":
            end += 1
    return line[:start] + new + line[end:]


@dataclass(frozen=True, slots=True)
class Mutation:
    """One named way to break a record."""

    name: str
    kind: Literal["value", "line"]
    apply: ValueMutation | LineMutation
    breaks_json: bool
    """True when the result is no longer a JSON value a strict parser accepts."""


MUTATIONS: tuple[Mutation, ...] = (
    Mutation("huge_integer", "value", huge_integer, False),
    Mutation("deep_nesting", "value", deep_nesting, False),
    Mutation("nul_character", "value", nul_character, False),
    Mutation("lone_surrogate", "value", lone_surrogate, False),
    Mutation("long_string", "value", long_string, False),
    Mutation("wrong_type", "value", wrong_type, False),
    Mutation("wrong_record_type", "value", wrong_record_type, False),
    Mutation("missing_field", "value", missing_field, False),
    Mutation("unquoted_hex", "line", unquoted_hex, True),
    Mutation("nan_or_infinity", "line", nan_or_infinity, True),
    Mutation("byte_order_mark", "line", byte_order_mark, True),
    Mutation("truncation", "line", truncation, True),
    Mutation("garbage_bytes", "line", garbage_bytes, True),
)
"""Every mutation; file-level damage (CRLF line ends, a BOM on the file) is in ``files``."""

MUTATION_NAMES = tuple(m.name for m in MUTATIONS)


def dump(record: Any) -> bytes:
    """A record as one JSON line (Python's encoder: big integers and NaN written as is)."""
    return json.dumps(record, ensure_ascii=True).encode()


def mutate_record(mutation: Mutation, rng: random.Random, record: Any) -> bytes:
    """The bytes of ``record`` after ``mutation`` (one line, no newline)."""
    if mutation.kind == "value":
        apply_value: Any = mutation.apply
        return dump(apply_value(rng, record))
    apply_line: Any = mutation.apply
    result: bytes = apply_line(rng, dump(record))
    return result.replace(b"\n", b" ")
