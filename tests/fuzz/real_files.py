"""Mutated copies of real transcript and benchmark files, with what must survive them.

A real file is cut to an excerpt (its first records) and some records are broken with
the mutations of ``mutations.py``. What the import of the mutated copy must still store
is every message that both the intact excerpt and a copy *without* the broken records
store: a message that survives both owes nothing to the broken records (one that only
one of them holds may come from a record the other drops or replaces, as Codex's event
mirrors replace a missing response item). Records are JSON Lines lines, the elements of a document that is a list, or the
elements of the longest list of a document that is an object (``messages``,
``history``, ``resourceSpans`` …).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from proctor.sources import prepare_bundle, read_paths
from proctor.transcript import ConversationBundle
from tests.fuzz.harness import parsed, refused
from tests.fuzz.mutations import MUTATIONS, Mutation, dump, mutate_record

EXCERPT_LINES = 16
"""JSON Lines records kept from a real file (its first ones)."""
EXCERPT_ELEMENTS = 3
"""List elements kept from a real document."""


def real_files(*roots: Path) -> list[Path]:
    """Every JSON and JSON Lines file under ``roots``, in a stable order."""
    return sorted(
        path
        for root in roots
        if root.is_dir()
        for path in root.rglob("*")
        if path.is_file() and path.suffix in (".json", ".jsonl")
    )


@dataclass(frozen=True, slots=True)
class Damage:
    """One mutated record of a mutated copy."""

    mutation: str
    file: str
    line: int | None
    """Its line in its file (None: the record is a file of its own)."""
    must_report: bool


@dataclass(frozen=True, slots=True)
class MutatedCopy:
    """The files of a mutated excerpt, of the intact excerpt and of the excerpt without
    the mutated records, and what was done."""

    mutated: dict[str, bytes]
    original: dict[str, bytes]
    without: dict[str, bytes]
    damage: tuple[Damage, ...]


def mutated_copy(path: Path, rng: random.Random, offset: int) -> MutatedCopy | None:
    """A mutated excerpt of ``path``; None for a file with no records to mutate."""
    raw = path.read_bytes()
    if path.suffix == ".jsonl":
        return _lines_copy(path.name, raw, rng, offset)
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return _document_copy(path.name, document, rng, offset)


def _chosen(count: int, rng: random.Random, offset: int) -> dict[int, Mutation]:
    """Which records to break, and how: about one in four, the mutations in turn."""
    picked = rng.sample(range(count), max(1, count // 4))
    return {index: MUTATIONS[(offset + n) % len(MUTATIONS)] for n, index in enumerate(picked)}


def _lines_copy(name: str, raw: bytes, rng: random.Random, offset: int) -> MutatedCopy | None:
    records = [orjson.loads(line) for line in raw.splitlines() if line.strip()][:EXCERPT_LINES]
    if not records:
        return None
    chosen = _chosen(len(records), rng, offset)
    mutated, baseline, damage = [], [], []
    original = b"\n".join(dump(record) for record in records) + b"\n"
    for index, record in enumerate(records):
        mutation = chosen.get(index)
        if mutation is None:
            mutated.append(dump(record))
            baseline.append(dump(record))
            continue
        data = mutate_record(mutation, rng, record)
        mutated.append(data)
        damage.append(Damage(mutation.name, name, index + 1, refused(data, want_object=True)))
    newline = rng.choice([b"\n", b"\r\n"])
    bom = rng.choice([b"", b"\xef\xbb\xbf"])
    return MutatedCopy(
        {name: bom + newline.join(mutated) + newline},
        {name: original},
        {name: b"\n".join(baseline) + b"\n"},
        tuple(damage),
    )


def _records_key(document: dict[str, Any]) -> str | None:
    lists = [(len(v), k) for k, v in document.items() if isinstance(v, list) and v]
    return max(lists)[1] if lists else None


def _document_copy(name: str, document: Any, rng: random.Random, offset: int) -> MutatedCopy | None:
    key = _records_key(document) if isinstance(document, dict) else None
    items = document if isinstance(document, list) else document[key] if key else None
    if not items:
        return None
    items = items[:EXCERPT_ELEMENTS]
    chosen = _chosen(len(items), rng, offset)
    kept, baseline, damage = [], [], []
    files: dict[str, bytes] = {}
    stem = name.removesuffix(".json")
    for index, item in enumerate(items):
        mutation = chosen.get(index)
        if mutation is None:
            kept.append(dump(item))
            baseline.append(dump(item))
            continue
        data = mutate_record(mutation, rng, item)
        if parsed(data, bom=False)[0]:
            damage.append(
                Damage(mutation.name, name, len(kept) + 2, refused(data, want_object=False))
            )
            kept.append(data)
        else:  # no longer JSON: it would break the whole document, so it goes on its own
            broken = f"{stem}-broken-{index}.json"
            files[broken] = b"[\n" + data + b"\n]\n"
            damage.append(Damage(mutation.name, broken, None, True))
    wrap = _wrapper(document, key)
    files[name] = wrap(b"[\n" + b",\n".join(kept) + b"\n]")
    original = wrap(b"[\n" + b",\n".join(dump(item) for item in items) + b"\n]")
    without = wrap(b"[\n" + b",\n".join(baseline) + b"\n]")
    return MutatedCopy(files, {name: original}, {name: without}, tuple(damage))


def _wrapper(document: Any, key: str | None) -> Callable[[bytes], bytes]:
    """Puts a list back inside its object (the object's other fields first), or not."""
    if key is None:
        return lambda body: body
    head = dump({k: v for k, v in document.items() if k != key})[:-1]
    separator = b", " if len(document) > 1 else b""
    prefix = head + separator + json.dumps(key).encode() + b": "
    return lambda body: prefix + body + b"}"


def expected_texts(folder: Path) -> set[str]:
    """The message texts an import of ``folder`` stores, read without a store."""
    texts: set[str] = set()
    for item in read_paths([folder]):
        if isinstance(item, ConversationBundle):
            texts.update(m.text for m in prepare_bundle(item).bundle.messages if m.text)
    return texts


def cases(paths: list[Path], rounds: int) -> Iterator[tuple[str, Path, int]]:
    """``(case id, real file, round)`` for every file and round."""
    for round_number in range(rounds):
        for index, path in enumerate(paths):
            yield f"{path.name}#{round_number}", path, round_number * 7 + index
