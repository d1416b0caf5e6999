"""OTLP/HTTP protobuf bodies, decoded with ``opentelemetry-proto`` (the ``otlp`` extra).

OpenTelemetry's Python SDK exports protobuf by default. A protobuf request is decoded
and converted to the OTLP/JSON document the otel adapter reads (ids come out base64,
which the adapter accepts); without the extra the request is answered 415 with what to
install.
"""

from __future__ import annotations

import importlib
from typing import Any

from fastapi import HTTPException

from proctor.api._intake_models import OtlpPartialSuccess

PROTOBUF = "application/x-protobuf"
_MISSING = (
    "OTLP protobuf needs the opentelemetry-proto package: pip install 'proctor[otlp]' "
    "(or set OTEL_EXPORTER_OTLP_PROTOCOL=http/json to send JSON, which needs nothing)"
)


def _modules() -> tuple[Any, Any, Any]:
    # Imported by name: the extra is optional, and protobuf ships no type information.
    try:
        return (
            importlib.import_module("google.protobuf.json_format"),
            importlib.import_module("opentelemetry.proto.collector.trace.v1.trace_service_pb2"),
            importlib.import_module("opentelemetry.proto.collector.logs.v1.logs_service_pb2"),
        )
    except ImportError:
        raise HTTPException(status_code=415, detail=_MISSING) from None


def decode_protobuf(body: bytes, signal: str) -> dict[str, Any]:
    """The OTLP/JSON document of a protobuf export request; 400 when it does not parse."""
    json_format, traces, logs = _modules()
    message_type = (
        traces.ExportTraceServiceRequest if signal == "traces" else logs.ExportLogsServiceRequest
    )
    message = message_type()
    try:
        message.ParseFromString(body)
    except Exception as exc:  # protobuf raises its own DecodeError (and others on bad input)
        raise HTTPException(
            status_code=400,
            detail=f"the body is not a protobuf {message_type.__name__} ({exc}); send the "
            "export request an OTLP exporter produces",
        ) from None
    document: dict[str, Any] = json_format.MessageToDict(message)
    return document


def encode_response(signal: str, dropped: int, partial: OtlpPartialSuccess | None) -> bytes:
    """The protobuf ``Export*ServiceResponse``, with ``partial_success`` when spans dropped."""
    _, traces, logs = _modules()
    if signal == "traces":
        response = traces.ExportTraceServiceResponse()
        if partial is not None:
            response.partial_success.rejected_spans = dropped
            response.partial_success.error_message = partial.error_message
    else:
        response = logs.ExportLogsServiceResponse()
    encoded: bytes = response.SerializeToString()
    return encoded
