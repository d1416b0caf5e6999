"""The exception tree drawn in ``proctor.errors`` is the one the code defines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import proctor
from proctor import errors
from proctor.errors import MODEL_ERROR_KINDS, RETRYABLE_MODEL_ERRORS, ModelError

SOURCE = Path(proctor.__file__).parent
_BRANCH = re.compile(r"^(?P<indent>[ │]*)[├└]── (?P<name>\w+)")


def drawn_tree(docstring: str) -> dict[str, str]:
    """Each class the drawing names, mapped to its parent in the drawing."""
    parents: dict[str, str] = {}
    path = ["ProctorError"]
    for line in docstring.splitlines():
        match = _BRANCH.match(line.strip("\n")[4:])
        if match is None:
            continue
        depth = len(match["indent"]) // 4 + 1
        name = match["name"]
        assert name not in parents, f"{name} is drawn twice"
        del path[depth:]
        parents[name] = path[-1]
        path.append(name)
    return parents


def defined_tree() -> dict[str, str]:
    """Each ``ProctorError`` subclass defined anywhere in the library, mapped to its base."""
    classes: list[tuple[str, list[str]]] = []
    for file in sorted(SOURCE.rglob("*.py")):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [
                    b.id if isinstance(b, ast.Name) else b.attr
                    for b in node.bases
                    if isinstance(b, ast.Name | ast.Attribute)
                ]
                classes.append((node.name, bases))
    tree: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for name, bases in classes:
            parent = next((b for b in bases if b == "ProctorError" or b in tree), None)
            if parent is not None and name not in tree:
                tree[name] = parent
                changed = True
    return tree


@pytest.mark.slow
def test_the_drawn_error_tree_lists_exactly_the_error_classes_of_the_code() -> None:
    assert errors.__doc__ is not None
    assert drawn_tree(errors.__doc__) == defined_tree()


def test_the_tree_reader_sees_a_class_left_out_of_the_drawing() -> None:
    assert errors.__doc__ is not None
    without = errors.__doc__.replace("    │   └── ReadOnlyBaseError", "")
    assert "ReadOnlyBaseError" not in drawn_tree(without)
    assert drawn_tree(errors.__doc__)["ReadOnlyBaseError"] == "ConfigError"
    assert drawn_tree(errors.__doc__)["ModelError"] == "ProctorError"


def test_the_model_error_kinds_drawn_and_documented_are_the_typed_ones() -> None:
    assert errors.__doc__ is not None
    drawn = errors.__doc__.split("``kind`` says how:", 1)[1].split("\n\n", 1)[0]
    assert [k.strip() for k in drawn.replace("\n", " ").split(",")] == list(MODEL_ERROR_KINDS)
    documented = set(re.findall(r"``(\w+)``", ModelError.__doc__ or "")) - {"kind"}
    assert documented == set(MODEL_ERROR_KINDS)


def test_only_rate_limits_server_failures_and_dropped_connections_are_retried() -> None:
    assert {"rate_limited", "server", "connection"} == RETRYABLE_MODEL_ERRORS
    retried = {kind for kind in MODEL_ERROR_KINDS if ModelError(kind, "x").retryable}
    assert retried == RETRYABLE_MODEL_ERRORS
