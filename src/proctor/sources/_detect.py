"""Find input files, recognise their format by content, and group them into read units."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from proctor.errors import ConfigError, SourceError
from proctor.sources._files import iter_jsonl, load_json_document
from proctor.sources._real_paths import RealPaths
from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter
from proctor.transcript import SourceIssue

_JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
"""Files named as JSON: met in a folder and not readable, they are reported, not skipped."""

_DAMAGE_SCAN_LINES = 10_000
"""Lines of an unrecognised JSON Lines file scanned for damage to report."""

_SKIP_DIRS = {
    ".git",
    "node_modules",
    "__pycache__",
    ".venv",
    "file-history",
    "todos",
    "shell-snapshots",
}


@dataclass(slots=True)
class Plan:
    """What an import will read: units per adapter, plus files that were refused."""

    units: list[tuple[SourceAdapter, ReadUnit]] = field(default_factory=list)
    issues: list[SourceIssue] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)
    """Files met while walking a folder that are not transcripts (left alone quietly)."""


def walk(paths: Iterable[Path]) -> Iterator[tuple[Path, bool]]:
    """Yield ``(file, explicit)``: files named directly, then files found under folders."""
    for path in paths:
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                for name in sorted(files):
                    if not name.startswith("."):
                        yield Path(root) / name, False
        else:
            yield path, True


def detect(sample: Sample, adapters: Sequence[SourceAdapter]) -> SourceAdapter | None:
    """The first adapter that recognises the sample's content.

    Sniffing looks at untrusted content: an adapter that fails on it (a bug to fix in
    that adapter) counts as not recognising the file, so the others still get to try.
    """
    for adapter in adapters:
        try:
            if adapter.sniff(sample):
                return adapter
        except Exception:  # one adapter's failure must not end the import
            continue
    return None


def salvaged_by(sample: Sample, adapters: Sequence[SourceAdapter]) -> SourceAdapter | None:
    """The first adapter, in detection order, that finds records of its format in a
    damaged file none recognised (``SourceAdapter.salvage``); None when none does."""
    for adapter in adapters:
        try:
            if adapter.salvage(sample):
                return adapter
        except Exception:  # as in detect: one adapter's failure must not end the import
            continue
    return None


def _damaged_json(sample: Sample) -> list[SourceIssue]:
    """What is wrong with a file named as JSON (``.json``, ``.jsonl``) that no adapter
    recognised because it is damaged: the bad lines of JSON Lines, or where a document
    stops being JSON. Empty for a file that is readable JSON in a format nobody knows."""
    suffix = sample.path.suffix.lower()
    if suffix not in _JSON_SUFFIXES:
        return []
    shown = str(sample.path)
    if suffix != ".json" or sample.is_jsonl:
        issues = [
            issue
            for issue in islice(iter_jsonl(sample.path), _DAMAGE_SCAN_LINES)
            if isinstance(issue, SourceIssue) and issue.severity == "error"
        ]
        if not issues:
            return []  # readable lines of a format nobody here knows: not ours
        verdict = "no line was recognised as a transcript record; nothing was imported"
        return [*issues, SourceIssue(shown, verdict)]
    if sample.text_start not in ("{", "[") and not sample.is_binary:
        return []
    try:
        load_json_document(sample.path)
    except SourceError as exc:
        return [SourceIssue(shown, f"{exc.reason}; the file was not imported", exc.line)]
    return []


def plan_import(
    paths: Sequence[Path], adapters: Sequence[SourceAdapter], *, format_name: str | None = None
) -> Plan:
    """Recognise every file under ``paths`` and group them into read units."""
    forced: SourceAdapter | None = None
    if format_name is not None:
        forced = next((a for a in adapters if a.name == format_name), None)
        if forced is None:
            names = ", ".join(a.name for a in adapters)
            raise ConfigError(f"unknown format {format_name!r}; choose one of: {names}")
    plan = Plan()
    by_adapter: dict[str, list[tuple[Path, Sample]]] = {}
    seen: set[Path] = set()
    real = RealPaths()
    for path, explicit in walk(paths):
        resolved = real(path)
        if resolved in seen:
            continue
        seen.add(resolved)
        if not path.exists():
            plan.issues.append(SourceIssue(str(path), "no such file or folder"))
            continue
        try:
            if path.stat().st_size == 0:
                if explicit:
                    plan.issues.append(SourceIssue(str(path), "empty file; nothing to import"))
                continue
            sample = Sample(path)
            sample.head  # noqa: B018 - read now, so a damaged file is reported here
        except SourceError as exc:
            plan.issues.append(SourceIssue(str(path), exc.reason))
            continue
        except OSError as exc:
            plan.issues.append(SourceIssue(str(path), f"cannot read: {exc.strerror or exc}"))
            continue
        if sample.is_binary:
            if explicit:
                plan.issues.append(
                    SourceIssue(
                        str(path), "binary file, not a transcript; give a JSON or JSONL file"
                    )
                )
            elif path.suffix.lower() in _JSON_SUFFIXES:
                plan.issues.extend(
                    _damaged_json(sample)
                    or [SourceIssue(str(path), "binary bytes where JSON was expected")]
                )
            else:
                plan.skipped.append(path)
            continue
        adapter = forced if forced is not None else detect(sample, adapters)
        damaged = _damaged_json(sample) if adapter is None else []
        if damaged:
            adapter = salvaged_by(sample, adapters)
        if adapter is None:
            if damaged:
                plan.issues.extend(damaged)
            elif explicit:
                plan.issues.append(
                    SourceIssue(
                        str(path),
                        "format not recognised; pass --format to choose one "
                        "(see `proctor ingest --help` for the list)",
                    )
                )
            else:
                plan.skipped.append(path)
            continue
        sample.compact()
        by_adapter.setdefault(adapter.name, []).append((path, sample))
    for adapter in adapters:
        files = by_adapter.get(adapter.name)
        if files:
            plan.units.extend((adapter, unit) for unit in _planned(adapter, files, plan))
            for _, sample in files:
                sample.compact()  # planning may have sampled again
    return plan


def _planned(
    adapter: SourceAdapter, files: list[tuple[Path, Sample]], plan: Plan
) -> list[ReadUnit]:
    """The adapter's units; if grouping fails on odd content (a bug in that adapter),
    each file is read on its own rather than the import ending."""
    try:
        return adapter.plan(files)
    except Exception as exc:  # RecursionError included: the import goes on
        plan.issues.append(
            SourceIssue(
                str(files[0][0]),
                f"the {adapter.name} adapter could not group its files ({type(exc).__name__}: "
                f"{str(exc)[:300]}); each file is read on its own — please report it",
                severity="warning",
            )
        )
        return SourceAdapter.plan(adapter, files)


def read_unit(adapter: SourceAdapter, unit: ReadUnit) -> Iterator[ReadItem]:
    """Read one unit, turning an unexpected adapter failure into an issue for that unit.

    Adapters report bad records themselves and go on; this is the last line of defence
    for a failure they did not foresee (a bug to fix in the adapter): what the unit
    yielded before it is kept, the rest of the unit is reported, and the import goes on.
    """
    if unit.sample is not None:
        unit = dataclasses.replace(unit, sample=unit.sample.reading())
    try:
        yield from adapter.read(unit)
    except SourceError as exc:
        yield SourceIssue(exc.path or str(unit.path), exc.reason, exc.line)
    except Exception as exc:  # RecursionError included: the import goes on
        yield unreadable_unit(adapter, unit, exc)


def unreadable_unit(adapter: SourceAdapter, unit: ReadUnit, exc: BaseException) -> SourceIssue:
    """The issue for a unit an adapter failed on unexpectedly (named, with the error)."""
    return SourceIssue(
        str(unit.path),
        f"could not be read by the {adapter.name} adapter ({type(exc).__name__}: "
        f"{str(exc)[:300]}); the rest of this file was skipped — please report it",
    )
