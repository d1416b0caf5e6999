"""Schemathesis serializers for the intake's own media types (imported by the conformance test).

Schemathesis ships none for ``application/x-ndjson`` (Proctor JSONL events) or
``application/x-protobuf`` (OTLP); without them it skips those request bodies and warns.
Generated values go on the wire as text and as raw bytes respectively.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from schemathesis.transport.serialization import serialize_binary


@schemathesis.serializer("application/x-ndjson")
def ndjson_body(context: schemathesis.SerializationContext, value: Any) -> bytes:
    """JSON Lines as text: a generated string is sent as its UTF-8 bytes."""
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


@schemathesis.serializer("application/x-protobuf")
def protobuf_body(context: schemathesis.SerializationContext, value: Any) -> bytes:
    """Protobuf as raw bytes (whatever was generated; most of it will not parse)."""
    return serialize_binary(value)
