"""What every evaluation shares: reading a benchmark through the product's own path,
rates with their counts, and the run record (rule versions, wall time) of EVAL-2."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.rules import Rule
from proctor.rules.builtin import builtin_rules
from proctor.sources import prepare_bundle, read_paths
from proctor.transcript import ConversationBundle, SourceIssue


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
    traces: int
    read_issues: int
    model_tokens: int = 0


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
        other benchmarks) are left alone.
        """
        for item in read_paths([data]):
            if isinstance(item, SourceIssue):
                if "format not recognised" not in item.reason:
                    self.issues.append(item)
            elif item.conversation.format == format_name:
                yield prepare_bundle(item).bundle


def labels_of(bundle: ConversationBundle) -> dict[str, Any]:
    """The benchmark's ground truth, kept apart from anything rules see."""
    labels = bundle.conversation.attributes.get("labels")
    return dict(labels) if isinstance(labels, dict) else {}
