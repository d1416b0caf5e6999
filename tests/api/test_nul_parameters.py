"""A NUL character in a query parameter or path is a 400 naming it, on both backends.

PostgreSQL refuses a statement with NUL in a text parameter, so before this layer a filter
such as ``?project=%00`` was a 500 there and "nothing found" on SQLite (schemathesis found
``GET /api/findings/groups?project=%00``). The cases invent other routes, positions and
spellings (raw NUL, ``%00`` in a name, in the middle of a value, in a path id).
"""

from __future__ import annotations

import pytest

from proctor.api._parameters import nul_refusal
from tests.api.conftest import Api
from tests.backends import ON_POSTGRES

REFUSED = [
    ("/api/findings/groups?by=rule&project=%00", "'project'"),
    ("/api/findings?project=shop%00&limit=5", "'project'"),
    ("/api/conversations?project=a%00b", "'project'"),
    ("/api/search?q=deploy%00", "'q'"),
    ("/api/activity?kind=x&%00=1", "'%00'"),
    ("/api/conversations/abc%00def", "path"),
]


@pytest.mark.parametrize(("url", "named"), REFUSED)
def test_a_nul_in_a_parameter_is_a_400_naming_it(api: Api, url: str, named: str) -> None:
    response = api.get(url)
    assert response.status_code == 400, response.text
    detail = response.json()["detail"]
    assert named in detail and "NUL" in detail


def test_a_state_change_with_a_nul_parameter_is_refused_before_its_route(api: Api) -> None:
    response = api.post("/api/findings/bulk?project=%00", json={"ids": [], "status": "dismissed"})
    assert response.status_code == 400 and "'project'" in response.json()["detail"]


def test_the_same_requests_without_the_nul_are_answered(api: Api) -> None:
    assert api.get("/api/findings/groups?by=rule&project=shop").status_code == 200
    assert api.get("/api/conversations?project=a%2500b").status_code == 200  # "%00" as text
    assert api.get("/api/conversations/abc-def").status_code == 404


@pytest.mark.parametrize(
    ("path", "query", "refused"),
    [
        ("/api/x", b"", False),
        ("/api/x", b"a=%2500", False),
        ("/api/x", b"a=%00", True),
        ("/api/x", b"a=%0", False),
        ("/api/x", b"A=1&b=%00%00", True),
        ("/api/x", b"a=1\x00", True),
        ("/api/\x00", b"", True),
    ],
)
def test_nul_refusal(path: str, query: bytes, refused: bool) -> None:
    assert (nul_refusal(path, query) is not None) is refused


BODIES = [
    ("/api/knowledge/preview", {"entity": "0", "result": "\u0000"}),
    ("/api/knowledge/preview", {"entity": "ab\u0000cd", "result": "latest"}),
]


@pytest.mark.parametrize(("url", "body"), BODIES)
def test_a_nul_in_a_body_value_that_is_looked_up_is_refused_not_a_500(
    api: Api, url: str, body: dict[str, str]
) -> None:
    """Body values reach the store as lookups: PostgreSQL refuses NUL in any text parameter
    (a 500 before); SQLite finds nothing. Either way a sentence, never a server error."""
    response = api.post(url, json=body)
    assert response.status_code in (400, 404), response.text
    if response.status_code == 400:
        assert "NUL" in response.json()["detail"]
    if ON_POSTGRES and body["result"] == "\u0000":
        assert response.status_code == 400  # the result's id is looked up first
