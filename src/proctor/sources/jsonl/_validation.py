"""Validating one line and saying, per field, what is wrong in words a producer can act on.

Every problem names the field by its path (``usage.input_tokens``,
``attachments[0].media_type``) and says what was expected, e.g.
``field "role": expected one of user, assistant, system, developer, tool``. Pydantic's
own messages are replaced because they speak Python ("Input should be a valid
integer") rather than JSON, and because hidden-reasoning fields deserve their own
explanation.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from typing import Any, Literal, cast

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from proctor.sources.jsonl._schema import (
    HIDDEN_REASONING_FIELDS,
    LINE_MODELS,
    EventLine,
    HeaderLine,
)
from proctor.transcript import clean_strings

_TYPE_CHOICES = ", ".join(LINE_MODELS)
_TIME_HINT = "expected an ISO-8601 time with a timezone, e.g. 2025-06-12T09:00:00Z"
_PLAIN: dict[str, str] = {
    "missing": "required but missing",
    "string_type": "expected a string",
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "bool_type": "expected true or false",
    "dict_type": "expected a JSON object",
    "model_type": "expected a JSON object",
    "model_attributes_type": "expected a JSON object",
    "list_type": "expected a JSON array",
    "string_too_short": "must not be empty",
    "timezone_aware": f"{_TIME_HINT} (this one has none)",
}


def validate_line(record: dict[str, Any]) -> tuple[HeaderLine | EventLine | None, list[str]]:
    """Validate one parsed line against the model its ``type`` names.

    Args:
        record: The line's JSON object.

    Returns:
        The validated line and no reasons, or None and one reason per problem, each
        naming the field (``field "role": expected one of …``).
    """
    kind = record.get("type")
    if kind is None:
        return None, [f'field "type": required but missing; expected one of {_TYPE_CHOICES}']
    model = LINE_MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        return None, [f'field "type": expected one of {_TYPE_CHOICES}']
    try:
        # Text by the stored rule (NUL and lone surrogates become U+FFFD), as for files.
        return cast(HeaderLine | EventLine, model.model_validate(clean_strings(record))), []
    except ValidationError as exc:
        return None, [describe(model, error) for error in exc.errors()]


def field_path(loc: Sequence[int | str]) -> str:
    """``("attachments", 0, "media_type")`` → ``attachments[0].media_type``."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else part
    return path


def describe(model: type[BaseModel], error: ErrorDetails) -> str:
    """One validation error as ``field "<path>": <what was expected>``."""
    loc = error["loc"]
    field = field_path(loc)
    kind = error["type"]
    name = str(loc[-1]) if loc else ""
    if kind == "extra_forbidden":
        if name in HIDDEN_REASONING_FIELDS:
            detail = (
                "hidden reasoning is not part of the format and is never stored; "
                "send only visible text"
            )
        else:
            allowed = ", ".join(_fields_at(model, loc[:-1]))
            detail = f"unknown field (check the spelling); allowed fields: {allowed}"
    elif kind == "literal_error":
        detail = "expected one of " + ", ".join(_choices_at(model, loc))
    elif kind == "greater_than_equal":
        detail = f"expected a number >= {error.get('ctx', {}).get('ge', 0)}"
    elif kind == "less_than_equal":
        detail = f"expected a number <= {error.get('ctx', {}).get('le')}"
    elif kind == "string_too_long":
        detail = f"longer than {error.get('ctx', {}).get('max_length')} characters"
    elif kind == "string_pattern_mismatch":
        detail = (
            "expected a media type such as image/png"
            if name == "media_type"
            else "must not contain control characters"
        )
    elif kind.startswith(("datetime", "date_")):
        detail = _TIME_HINT
    elif kind == "value_error":
        detail = str(error.get("ctx", {}).get("error", error["msg"]))
    else:
        detail = _PLAIN.get(kind, error["msg"])
    return f'field "{field}": {detail}'


def _unwrap(annotation: Any) -> list[Any]:
    """The members of a union / Optional / Annotated annotation."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _unwrap(arg)]
    return [annotation]


def _annotation_at(model: type[BaseModel], loc: Sequence[int | str]) -> Any:
    annotation: Any = model
    for part in loc:
        if isinstance(part, int):
            members = [typing.get_args(m)[0] for m in _unwrap(annotation) if typing.get_args(m)]
            annotation = members[0] if members else None
            continue
        inner = next(
            (m for m in _unwrap(annotation) if isinstance(m, type) and issubclass(m, BaseModel)),
            None,
        )
        if inner is None or part not in inner.model_fields:
            return None
        annotation = inner.model_fields[part].annotation
    return annotation


def _choices_at(model: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    members = _unwrap(_annotation_at(model, loc))
    return [
        str(value)
        for member in members
        if typing.get_origin(member) is Literal
        for value in typing.get_args(member)
    ]


def _fields_at(model: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    members = _unwrap(_annotation_at(model, loc))
    inner = next((m for m in members if isinstance(m, type) and issubclass(m, BaseModel)), None)
    return [] if inner is None else list(inner.model_fields)
