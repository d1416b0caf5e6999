"""Reading raw request bodies for the intake: media type, size limit, gzip.

The intake reads bodies itself (they are JSON Lines or protobuf, not one JSON document),
so the checks FastAPI would otherwise make happen here: an unsupported ``Content-Type``
is answered 415, a body over the limit 413 (before it is read whole when the client
declares its length, and while reading otherwise), a damaged gzip body 400.
"""

from __future__ import annotations

import zlib

from fastapi import HTTPException, Request

from proctor.ingest import MAX_PAYLOAD_BYTES


def media_type(request: Request) -> str:
    """The request's media type, lowercased, without parameters (``charset=…``)."""
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def require_media_type(request: Request, accepted: tuple[str, ...], hint: str) -> str:
    """The request's media type when it is one of ``accepted``; 415 otherwise."""
    found = media_type(request)
    if found not in accepted:
        raise HTTPException(
            status_code=415,
            detail=f"Content-Type {found or '(none)'!r} is not accepted here; {hint}",
        )
    return found


def _too_large() -> HTTPException:
    return HTTPException(
        status_code=413,
        detail=f"the request body is larger than {MAX_PAYLOAD_BYTES // (1024 * 1024)} MiB; "
        "send the events in several smaller requests",
    )


async def read_body(request: Request) -> bytes:
    """The whole body, decompressed when ``Content-Encoding: gzip``; 413 past the limit."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_PAYLOAD_BYTES:
        raise _too_large()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_PAYLOAD_BYTES:
            raise _too_large()
        chunks.append(chunk)
    body = b"".join(chunks)
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding != "gzip":
        raise HTTPException(
            status_code=415,
            detail=f"Content-Encoding {encoding!r} is not supported; send gzip or no encoding",
        )
    return _gunzip(body)


def _gunzip(body: bytes) -> bytes:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, MAX_PAYLOAD_BYTES + 1)
    except zlib.error as exc:
        raise HTTPException(
            status_code=400, detail=f"the gzip body is damaged ({exc}); send it again"
        ) from None
    if len(data) > MAX_PAYLOAD_BYTES or inflater.unconsumed_tail:
        raise _too_large()
    return data
