"""JSON Schemas as each provider's structured-output mode accepts them.

OpenAI's strict mode (``"strict": true``) takes a subset of JSON Schema: every object
lists all its properties as required and forbids others, and string-length keywords are
refused. ``strict_schema`` rewrites a pydantic schema into that subset. The result is
narrower where it matters (an optional property must now be present) and drops only
length bounds, which the caller's own validation still enforces; every answer it admits
therefore has the original's shape.

llama.cpp turns a schema into a grammar in which a bounded repetition becomes nested
rules; past a few thousand it refuses the grammar, and llama-cpp-python 0.3 then crashes
the process. ``grammar_schema`` leaves large bounds to validation instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from proctor.errors import ModelError

_STRICT_UNSUPPORTED = frozenset({"minLength", "maxLength", "default"})
"""Keywords OpenAI's strict mode refuses; the answer's validation still applies them."""
_REPETITION_KEYWORDS = frozenset({"minLength", "maxLength", "minItems", "maxItems"})
GRAMMAR_REPETITION_LIMIT = 500
"""Largest length or item bound handed to llama.cpp's grammar; larger ones are dropped."""


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every local ``$ref`` replaced by its definition and ``$defs`` removed."""
    definitions: dict[str, Any] = schema.get("$defs", {})

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        reference = node.get("$ref")
        if isinstance(reference, str):
            name = reference.removeprefix("#/$defs/")
            if name == reference or name not in definitions:
                raise ModelError(
                    "config", f"the answer schema has an unresolvable $ref {reference!r}"
                )
            if name in seen:
                raise ModelError("config", f"the answer schema is recursive through {name!r}")
            return resolve(definitions[name], (*seen, name))
        return {key: resolve(value, seen) for key, value in node.items() if key != "$defs"}

    resolved: dict[str, Any] = resolve(schema, ())
    return resolved


def _without(node: Any, drop: Callable[[str, Any], bool], *, require_all: bool = False) -> Any:
    """``node`` without the keywords ``drop`` picks (property names are never keywords)."""
    if isinstance(node, list):
        return [_without(item, drop, require_all=require_all) for item in node]
    if not isinstance(node, dict):
        return node
    kept: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            kept[key] = {
                name: _without(sub, drop, require_all=require_all) for name, sub in value.items()
            }
        elif not drop(key, value):
            kept[key] = _without(value, drop, require_all=require_all)
    if require_all and isinstance(node.get("properties"), dict):
        kept["required"] = list(node["properties"])
        kept["additionalProperties"] = False
    return kept


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` in the subset OpenAI's strict structured-output mode accepts."""
    strict: dict[str, Any] = _without(
        inline_refs(schema), lambda key, _: key in _STRICT_UNSUPPORTED, require_all=True
    )
    return strict


def grammar_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as llama.cpp can turn it into a grammar: no references, no huge bounds."""

    def too_large(key: str, value: Any) -> bool:
        return (
            key in _REPETITION_KEYWORDS
            and isinstance(value, int)
            and value > GRAMMAR_REPETITION_LIMIT
        )

    loosened: dict[str, Any] = _without(inline_refs(schema), too_large)
    return loosened
