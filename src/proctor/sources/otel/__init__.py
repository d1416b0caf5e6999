"""OpenTelemetry GenAI and OpenInference spans exported as OTLP JSON."""

from proctor.sources.otel._adapter import ExportsRead, OtelAdapter, read_exports

__all__ = ["ExportsRead", "OtelAdapter", "read_exports"]
