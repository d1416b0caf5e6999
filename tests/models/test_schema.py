"""``strict_schema``: the supervisor's answer schema in the subset OpenAI's strict mode accepts."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from proctor.errors import ModelError
from proctor.models import inline_refs, strict_schema
from proctor.supervisor._decision import answer_schema

DECISION = {
    "action": "warn",
    "category": "evidence_gap",
    "severity": "medium",
    "title": "Claimed tests pass without a test run",
    "content": "m10 says all tests pass; the only run (m9) failed.",
    "evidence": ["m9", "m10"],
    "confidence": 0.8,
    "suggested_actions": [],
}


def _objects(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [found for item in node for found in _objects(item)]
    if not isinstance(node, dict):
        return []
    own = [node] if node.get("type") == "object" else []
    return own + [found for value in node.values() for found in _objects(value)]


def test_every_object_requires_all_its_properties_and_forbids_others() -> None:
    strict = strict_schema(answer_schema())
    objects = _objects(strict)
    assert len(objects) == 2
    for node in objects:
        assert sorted(node["required"]) == sorted(node["properties"])
        assert node["additionalProperties"] is False


def test_references_and_keywords_strict_mode_refuses_are_gone() -> None:
    text = str(strict_schema(answer_schema()))
    for refused in ("$ref", "$defs", "maxLength", "minLength", "'default'"):
        assert refused not in text


def test_a_strict_answer_is_a_valid_answer_and_an_optional_field_becomes_required() -> None:
    strict = strict_schema(answer_schema())
    answer = {"decisions": [DECISION]}
    jsonschema.validate(answer, strict)
    jsonschema.validate(answer, answer_schema())
    without_optional = {
        "decisions": [{k: v for k, v in DECISION.items() if k != "suggested_actions"}]
    }
    jsonschema.validate(without_optional, answer_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(without_optional, strict)


def test_a_property_named_like_a_keyword_is_kept() -> None:
    schema = {"type": "object", "properties": {"default": {"type": "string", "maxLength": 3}}}
    assert strict_schema(schema)["properties"] == {"default": {"type": "string"}}
    assert strict_schema(schema)["required"] == ["default"]


def test_recursive_or_unknown_references_are_refused() -> None:
    recursive = {"$defs": {"Node": {"$ref": "#/$defs/Node"}}, "$ref": "#/$defs/Node"}
    with pytest.raises(ModelError, match="recursive"):
        inline_refs(recursive)
    with pytest.raises(ModelError, match="unresolvable"):
        inline_refs({"$ref": "#/$defs/Missing"})
