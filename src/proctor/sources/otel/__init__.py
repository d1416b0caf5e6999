"""OpenTelemetry GenAI and OpenInference spans exported as OTLP JSON."""

from proctor.sources.otel._adapter import OtelAdapter

__all__ = ["OtelAdapter"]
