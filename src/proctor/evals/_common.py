"""What every evaluation shares: reading a benchmark through the product's own path,
rates with their counts, and the run record of EVAL-2 (supervisor, model, prompt and
rule versions, tokens, wall time)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from proctor.rules import Rule
from proctor.rules.builtin import builtin_rules
from proctor.sources import prepare_bundle, read_paths
from proctor.transcript import ConversationBundle, SourceIssue

T = TypeVar("T")


def rate(numerator: int, denominator: int) -> float | None:
    """A ratio, or None when there is nothing to divide by."""
    return None if denominator == 0 else numerator / denominator


def f1(precision: float | None, recall: float | None) -> float | None:
    """Harmonic mean of precision and recall."""
    if precision is None or recall is None or precision + recall == 0:
        return None
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True, slots=True)
class RunInfo:
    """How an evaluation was produced, so runs can be compared (SPEC EVAL-2)."""

    supervisor: str
    """``rules only`` or the model used."""
    rule_versions: dict[str, int]
    seconds: float
    """Wall time of the run."""
    traces: int
    read_issues: int
    connection: str | None = None
    """The saved connection a model run used."""
    model: str | None = None
    prompt_versions: dict[str, int] = field(default_factory=dict)
    input_tokens: int = 0
    """Tokens the provider reported for the calls that returned an answer; attempts of
    calls that failed are counted in the store's usage under ``run_id``."""
    output_tokens: int = 0
    calls: int = 0
    """Model calls made, repair calls included (a retried call counts once)."""
    run_id: str | None = None
    """The id the run's model usage is recorded under."""

    def as_json(self) -> dict[str, Any]:
        """The run record every report starts with."""
        return {
            "supervisor": self.supervisor,
            "connection": self.connection,
            "model": self.model,
            "run_id": self.run_id,
            "prompt_versions": self.prompt_versions,
            "rule_versions": self.rule_versions,
            "seconds": self.seconds,
            "tokens": {
                "input": self.input_tokens,
                "output": self.output_tokens,
                "calls": self.calls,
            },
        }


def rule_versions(rules: Sequence[Rule] | None = None) -> dict[str, int]:
    """Versions of the rules an evaluation ran."""
    return {rule.id: rule.version for rule in (rules if rules is not None else builtin_rules())}


@dataclass(slots=True)
class Reading:
    """Prepared bundles of a benchmark folder, read exactly as ``proctor ingest`` would."""

    issues: list[SourceIssue] = field(default_factory=list)

    def bundles(self, data: Path, format_name: str) -> Iterator[ConversationBundle]:
        """Prepared (redacted, bounded) bundles of the benchmark's files under ``data``.

        Files are recognised by content as in an import; other files (provenance notes,
        other benchmarks) are left alone. A record that cannot be prepared (redacted,
        bounded, fingerprinted) becomes an issue naming it, and the rest is read.
        """
        for item in read_paths([data]):
            if isinstance(item, SourceIssue):
                if "format not recognised" not in item.reason:
                    self.issues.append(item)
            elif item.conversation.format == format_name:
                try:
                    prepared = prepare_bundle(item)
                except Exception as exc:  # one record that cannot be prepared ends nothing
                    self.issues.append(
                        SourceIssue(
                            item.origin or str(data),
                            f"conversation {item.conversation_id}: cannot be prepared "
                            f"({type(exc).__name__}: {exc}); skipped",
                        )
                    )
                    continue
                yield prepared.bundle


def spread_sample(items: Sequence[T], limit: int | None) -> list[T]:
    """``limit`` items spread evenly over ``items`` (all of them without a limit).

    Benchmark files are often sorted by category and label, so the first N records
    would all be alike; an even spread keeps the mix, and is the same on every run.
    """
    if limit is None or limit >= len(items):
        return list(items)
    return [items[index * len(items) // limit] for index in range(max(limit, 0))]


def labels_of(bundle: ConversationBundle) -> dict[str, Any]:
    """The benchmark's ground truth, kept apart from anything rules see."""
    labels = bundle.conversation.attributes.get("labels")
    return dict(labels) if isinstance(labels, dict) else {}
