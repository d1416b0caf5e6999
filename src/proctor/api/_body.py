"""Reading raw request bodies for the intake: media type, size limit, gzip.

The intake reads bodies itself (they are JSON Lines or protobuf, not one JSON document),
so the checks FastAPI would otherwise make happen here: an unsupported ``Content-Type``
is answered 415, a body over the limit 413 (before it is read whole when the client
declares its length, and while reading otherwise), a body that is not whole, valid gzip 400
(a cut-short stream is named as such, never read as "no events").
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
    """The data of every gzip member in ``body``; 400 unless it is whole, valid gzip."""
    data = bytearray()
    rest = body
    while True:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            data += inflater.decompress(rest, MAX_PAYLOAD_BYTES + 1 - len(data))
        except zlib.error as exc:
            where = "" if rest is body else f"the {len(rest)} bytes after its end: "
            raise _not_gzip(f"{where}{exc}") from None
        if len(data) > MAX_PAYLOAD_BYTES or inflater.unconsumed_tail:
            raise _too_large()
        if not inflater.eof:
            raise _not_gzip(
                "it is empty"
                if not body
                else f"it ends inside the compressed stream (after {len(body)} bytes: cut short?)"
            )
        # Members may follow each other (RFC 1952 §2.2); zero padding after the last is allowed,
        # as Python's gzip module allows it.
        rest = inflater.unused_data.lstrip(b"\0")
        if not rest:
            return bytes(data)


def _not_gzip(reason: str) -> HTTPException:
    return HTTPException(
        status_code=400,
        detail=f"the body is not valid gzip: {reason}; send the whole gzip-compressed body "
        "again, or drop the `Content-Encoding: gzip` header for an uncompressed one",
    )
