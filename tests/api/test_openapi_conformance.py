"""Schemathesis against the API's own OpenAPI document: no 5xx, responses match their schemas.

Every operation the app declares is exercised with generated valid and invalid input (query
strings, path ids, bodies) through the ASGI app, over a private copy of a reviewed store. The
examples per operation are bounded so the run stays a few seconds per operation: schemathesis'
coverage phase (its boundary and invalid values) runs whole everywhere, and the random examples
are a property's (tests/properties.py): 20 per operation and generation mode in ``make test``,
40 in ``make fuzz``; ``make check`` (the inner loop) leaves the file out (marked ``slow``). They were 40 everywhere: the file
alone took 81 CPU seconds (``-n 0``, load 5), near a third of ``make check``'s tests; 20 take
45 to 57. The coverage phase is about 3,400 requests of the 81 tests, whatever the count.

The PostgreSQL pass (``PROCTOR_TEST_BACKEND=postgresql``) runs the coverage phase whole and
draws ``POSTGRES_EXAMPLES`` random examples per operation: what it is there for is the
store's SQL on the other backend. The rule for trimming it: every line and branch of
``src/proctor/store`` (the backend-dependent code) that the full count reaches on
PostgreSQL is still reached on PostgreSQL, by this file at the lower count or by another
test of that pass. Measured with ``--cov=proctor --cov-branch`` on PostgreSQL, 20 examples
against fewer: see ``POSTGRES_EXAMPLES``; measure again when changing it. Everything above
the store runs the same code on either backend and gets the full count on SQLite.
"""

from __future__ import annotations

from collections.abc import Iterator
from http.cookiejar import DefaultCookiePolicy
from pathlib import Path
from typing import Any, cast

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.generation.hypothesis import builder
from schemathesis.python import asgi

from proctor.api import create_app
from proctor.store import open_store
from tests import backends, properties
from tests.api import schemathesis_media

# 81 property tests, 29 s of the inner loop's tests: `make test` runs them, `make check` not.
pytestmark = pytest.mark.slow

_database: dict[str, Path] = {}
"""The database the app serves during the current test (each test gets a private copy)."""

assert schemathesis_media  # registers serializers for the intake's JSONL and protobuf bodies


class _CoverageCases(list[Any]):
    """A test's explicit examples, with the coverage phase's cases added when the test runs.

    schemathesis attaches every boundary and invalid value of an operation (about 3,400
    cases for the 81 operations) to its test as a hypothesis ``@example`` while pytest
    collects the file, in every pytest-xdist worker of both passes, though only the worker
    the file is handed to runs them: collecting the file took 9.0 CPU s, 5.3 without. Hypothesis reads a test's explicit
    examples when it runs it (``reversed(test.hypothesis_explicit_examples)``), so the
    cases are made then, by schemathesis' own ``add_coverage``, onto the same test and in
    the same order: the same cases run, and the same marks (an unserializable media type)
    are read after the run."""

    def __init__(self, attached: list[Any], make: Any) -> None:
        super().__init__(attached)
        self._make: Any = make

    def _made(self) -> _CoverageCases:
        make, self._make = self._make, None
        if make is not None:
            make()  # appends to this list: it is the test's explicit examples
        return self

    def __reversed__(self) -> Iterator[Any]:
        return list.__reversed__(self._made())

    def __iter__(self) -> Iterator[Any]:
        return list.__iter__(self._made())

    def __len__(self) -> int:
        return list.__len__(self._made())


_add_coverage_now = builder.add_coverage


def _add_coverage_when_run(test: Any, *args: Any, **kwargs: Any) -> Any:
    attached = list(getattr(test, "hypothesis_explicit_examples", ()))
    test.hypothesis_explicit_examples = _CoverageCases(
        attached, lambda: _add_coverage_now(test, *args, **kwargs)
    )
    return test


builder.add_coverage = _add_coverage_when_run  # for this module's tests, collected below

APP = create_app(
    lambda: open_store(_database["path"]), token=None, allowed_hosts=["testserver"]
)  # schemathesis calls an ASGI app as http://testserver
# pytest 9 and schemathesis' `from_fixture` disagree on node ids, so the schema is loaded from
# the app at import; the app opens its store on the first request of each test.
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)

CLIENT = asgi.get_client(cast("asgi.ASGIApp", APP))  # FastAPI types its scope wider
"""One client for every case, as one that is not a browser: a client per case (schemathesis'
default) is a new requests session, and each read the environment for proxies twice per
request (``trust_env``), 7% of the run's CPU time."""
CLIENT.trust_env = False
CLIENT.headers["X-Proctor-Client"] = "schemathesis"
CLIENT.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))  # no case sees another's


@pytest.fixture(autouse=True)
def serve_a_private_copy(database: Path) -> Iterator[None]:
    _database["path"] = database
    try:
        with CLIENT:  # starts the app's lifespan once, as schemathesis' own client does
            yield
    finally:
        APP.state.store_holder.close()


POSTGRES_EXAMPLES = 1
"""Random examples per operation on the PostgreSQL pass (the coverage phase runs whole).
Measured on PostgreSQL with branch coverage, this file at 20 examples against 1: of the
lines and branches of ``src/proctor/store`` the 20 reached, 1 missed the refusal of a NUL
character in a text parameter (``store/_base.py``; PostgreSQL refuses such a statement),
which ``tests/api/test_nul_parameters.py`` reaches on PostgreSQL, and the exception leaving
``_reader.conversation_summary`` through it; nothing else. Random examples reach different
lines at each count (5 missed three lines of ``_notifications.py`` that 1 and 20 reached,
and reached 12 lines of ``_graph_edits.py`` neither did): a count between is no closer."""


def examples_per_operation() -> int:
    """The random examples each operation draws (see the module's docstring)."""
    full = properties.examples(40, floor=20)
    return min(full, POSTGRES_EXAMPLES) if backends.ON_POSTGRES else full


@schema.parametrize()
@settings(
    max_examples=examples_per_operation(),
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
def test_no_operation_answers_a_server_error_or_breaks_its_response_schema(
    case: schemathesis.Case[Any],
) -> None:
    if case.path == "/api/notifications/stream":
        _bound_the_stream(case)
    case.call_and_validate(
        session=CLIENT,
        checks=[
            schemathesis.checks.not_a_server_error,
            schemathesis.checks.response_schema_conformance,
            schemathesis.checks.status_code_conformance,
            schemathesis.checks.content_type_conformance,
        ],
    )


def _bound_the_stream(case: schemathesis.Case[Any]) -> None:
    """The notifications stream answers until ``max_seconds`` (300 when absent): a valid
    duration becomes at most 50 ms, so each such case costs that, not five minutes;
    an invalid one is kept for the route to refuse."""
    query = dict(case.query or {})
    try:
        seconds = float(query.get("max_seconds", 300))
    except (TypeError, ValueError):
        return
    if 0 < seconds <= 3600:
        query["max_seconds"] = min(seconds, 0.05)
        case.query = query
