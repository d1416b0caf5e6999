"""``excerpts=false`` on a result's graph: the same graph, every cited source kept (title,
time, whether it still exists) with its excerpt left empty; the default keeps them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.store import open_store
from tests.api.conftest import Api
from tests.backends import copy_database
from tests.conftest import EXAMPLES_DIR


@pytest.fixture(scope="module")
def two_reviews(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples reviewed in two steps: two results of one scope, sources cited."""
    path = tmp_path_factory.mktemp("excerpts") / "proctor.db"
    store = open_store(path)
    try:
        ingest(store, [EXAMPLES_DIR / "codex"])
        start_review(store, ReviewRequest(), semantic=None)
        ingest(store, [EXAMPLES_DIR / "claude-code"])
        start_review(store, ReviewRequest(), semantic=None)
    finally:
        store.close()
    return path


@pytest.fixture
def api(two_reviews: Path, proctor_home: Path) -> Iterator[Api]:
    copy = proctor_home / "proctor.db"
    copy_database(two_reviews, copy)
    client = Api(copy)
    try:
        yield client
    finally:
        client.close()


def _graph(api: Api, result_id: str, **params: object) -> tuple[dict[str, Any], int]:
    response = api.get(f"/api/results/{result_id}/graph", params={"limit": 500, **params})
    assert response.status_code == 200, response.text
    graph: dict[str, Any] = response.json()
    return graph, len(response.content)


def _results(api: Api) -> list[str]:
    results = api.get("/api/results").json()["results"]
    assert len(results) == 2
    return [r["result_id"] for r in results]


@pytest.mark.parametrize(
    "view",
    [{}, {"cumulative": "true"}, {"as_published": "true"}, {"limit": 3, "offset": 2}],
    ids=["one result", "cumulative", "as published", "a page of it"],
)
def test_without_excerpts_the_graph_is_the_same_and_only_the_excerpts_are_empty(
    api: Api, view: dict[str, object]
) -> None:
    for result_id in _results(api):
        full, full_size = _graph(api, result_id, **view)
        lean, lean_size = _graph(api, result_id, excerpts="false", **view)
        assert full["sources"], "the example graphs cite sources"
        assert any(source["excerpt"] for source in full["sources"].values())
        assert {key: source["excerpt"] for key, source in lean["sources"].items()} == dict.fromkeys(
            full["sources"], ""
        )
        emptied = {key: {**source, "excerpt": ""} for key, source in full["sources"].items()}
        assert lean["sources"] == emptied
        assert {**lean, "sources": None} == {**full, "sources": None}
        assert lean_size < full_size


def test_the_default_and_excerpts_true_keep_every_excerpt(api: Api) -> None:
    newest = _results(api)[0]
    default, _ = _graph(api, newest, cumulative="true")
    explicit, _ = _graph(api, newest, cumulative="true", excerpts="true")
    assert default == explicit
    assert any(source["excerpt"] for source in default["sources"].values())


def test_an_excerpts_value_that_is_not_a_boolean_is_refused_naming_the_parameter(
    api: Api,
) -> None:
    newest = _results(api)[0]
    response = api.get(f"/api/results/{newest}/graph", params={"excerpts": "some"})
    assert response.status_code == 422
    assert "excerpts" in response.text
