"""OpenTelemetry GenAI and OpenInference spans exported as OTLP JSON."""

from __future__ import annotations

from collections.abc import Iterator

from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter


class OtelAdapter(SourceAdapter):
    """OpenTelemetry GenAI and OpenInference spans exported as OTLP JSON."""

    name = "otel"
    description = "OpenTelemetry GenAI and OpenInference spans exported as OTLP JSON."

    def sniff(self, sample: Sample) -> bool:
        """Not implemented yet: recognises nothing."""
        return False

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Not implemented yet."""
        return iter(())
