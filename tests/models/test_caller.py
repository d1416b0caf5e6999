"""The caller's MOD-4 rules over real loopback HTTP against the scripted model server."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import anyio
import pytest

from proctor.errors import ModelError
from proctor.models import (
    ModelConnection,
    PoolLimits,
    open_caller,
    pool_limits,
    set_pool_limits,
    store_recorder,
)
from proctor.models._caller import CallTiming, PooledCaller, provider_attempt
from proctor.models._pool import ModelPool
from proctor.store import open_store
from proctor.testing.scripted_model import RecordedRequest, ScriptedModelServer, ScriptedReply
from tests.models.helpers import RecordedCalls, ask, complete, fast_caller

OK = {"ok": True}


def test_a_call_returns_the_parsed_answer_with_the_providers_usage() -> None:
    with ScriptedModelServer([ScriptedReply(OK, input_tokens=11, output_tokens=3)]) as server:
        response = complete(fast_caller(server.connection()))
    assert response.data == OK
    assert (response.input_tokens, response.output_tokens) == (11, 3)
    assert response.finish_reason == "stop"
    assert [(a.attempt, a.outcome) for a in response.attempts] == [(1, "ok")]


def test_a_stall_past_the_stage_timeout_fails_the_call_with_timeout() -> None:
    recorder = RecordedCalls()
    with ScriptedModelServer([ScriptedReply(OK, stall_s=30)]) as server:
        caller = fast_caller(server.connection(), recorder=recorder, stage_timeout_s=0.3)
        started = time.monotonic()
        with pytest.raises(ModelError) as caught:
            complete(caller)
    assert caught.value.kind == "timeout"
    assert time.monotonic() - started < 5
    assert recorder.outcomes == ["timeout"]


class SteppedLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock a test moves forward: what times out, times out then,
    however fast or slow the machine runs the rest."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped = 0.0

    def time(self) -> float:
        return super().time() + self.skipped

    def step(self, seconds: float) -> None:
        """Let ``seconds`` pass on this loop's clock at once."""
        self.skipped += seconds


def test_the_stage_timeout_covers_the_retry_too() -> None:
    # Each attempt fits the 600 s stage timeout; both together do not. On the loop's own
    # clock, 400 s pass before the retry (the wait after the 429), and 400 more once the
    # retry's request has arrived (its answer is held): the stage is then 800 s old, the
    # retry alone 400 s. A timeout per attempt would not end the retry before the server
    # answers it, 15 s later. No wall-clock margin decides the outcome.
    recorder = RecordedCalls()

    async def slow_retry_wait(seconds: float) -> None:
        _stepped().step(400)

    async def scenario(server: ScriptedModelServer) -> ModelError:
        caller = PooledCaller(
            server.connection(),
            PoolLimits(),
            pool=ModelPool(),
            recorder=recorder,
            timing=CallTiming(stage_timeout_s=600, sleep=slow_retry_wait),
            attempt=provider_attempt(server.connection()),
        )

        async def well_into_the_retry() -> None:
            while len(server.requests) < 2:
                await anyio.sleep(0.005)
            _stepped().step(400)

        async with anyio.create_task_group() as group:
            group.start_soon(well_into_the_retry)
            try:
                with pytest.raises(ModelError) as caught:
                    await caller.complete(ask())
            finally:
                group.cancel_scope.cancel()
        return caught.value

    held = ScriptedReply(OK, stall_s=15)
    with ScriptedModelServer([ScriptedReply(status=429), held]) as server:
        error = anyio.run(scenario, server, backend_options={"loop_factory": SteppedLoop})
        assert len(server.requests) == 2
    assert error.kind == "timeout"
    assert recorder.outcomes == ["rate_limited", "timeout"]


def _stepped() -> SteppedLoop:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, SteppedLoop)
    return loop


def test_an_answer_past_the_capacity_is_aborted_and_never_retried() -> None:
    recorder = RecordedCalls()
    big = ScriptedReply(OK, pad_to_bytes=300 * 1024)
    with ScriptedModelServer([big, ScriptedReply(OK)]) as server:
        caller = fast_caller(
            server.connection(), limits=PoolLimits(capacity_kib=100), recorder=recorder
        )
        with pytest.raises(ModelError) as caught:
            complete(caller)
        assert len(server.requests) == 1
    assert caught.value.kind == "capacity"
    assert "100 KiB" in str(caught.value)
    assert recorder.outcomes == ["capacity"]


def test_an_answer_just_under_the_capacity_is_accepted() -> None:
    with ScriptedModelServer([ScriptedReply(OK, pad_to_bytes=90 * 1024)]) as server:
        caller = fast_caller(server.connection(), limits=PoolLimits(capacity_kib=100))
        assert complete(caller).data == OK


def test_two_429s_make_exactly_two_requests_and_fail_rate_limited() -> None:
    recorder = RecordedCalls()
    with ScriptedModelServer([ScriptedReply(status=429)] * 3) as server:
        with pytest.raises(ModelError) as caught:
            complete(fast_caller(server.connection(), recorder=recorder))
        assert len(server.requests) == 2
    assert caught.value.kind == "rate_limited"
    assert recorder.outcomes == ["rate_limited", "rate_limited"]


@pytest.mark.parametrize(
    "first",
    [ScriptedReply(status=429), ScriptedReply(status=503), ScriptedReply(OK, truncate=True)],
    ids=["429", "503", "stream-cut-short"],
)
def test_a_transient_failure_is_retried_once_and_the_second_answer_returned(
    first: ScriptedReply,
) -> None:
    with ScriptedModelServer([first, ScriptedReply(OK)]) as server:
        response = complete(fast_caller(server.connection()))
        assert len(server.requests) == 2
    assert response.data == OK
    assert [a.attempt for a in response.attempts] == [1, 2]
    assert response.attempts[1].outcome == "ok"


def test_a_stream_cut_short_twice_fails_with_connection() -> None:
    with (
        ScriptedModelServer([ScriptedReply(OK, truncate=True)] * 2) as server,
        pytest.raises(ModelError) as caught,
    ):
        complete(fast_caller(server.connection()))
    assert caught.value.kind == "connection"


def test_a_refused_connection_is_a_retried_connection_error() -> None:
    with ScriptedModelServer() as server:
        connection = server.connection()  # the port is known; once stopped nothing listens
    recorder = RecordedCalls()
    with pytest.raises(ModelError) as caught:
        complete(fast_caller(connection, recorder=recorder))
    assert caught.value.kind == "connection"
    assert recorder.outcomes == ["connection", "connection"]


@pytest.mark.parametrize(
    ("status", "kind"),
    [(400, "rejected"), (401, "auth"), (403, "auth"), (404, "config"), (422, "rejected")],
)
def test_client_errors_are_not_retried(status: int, kind: str) -> None:
    with ScriptedModelServer([ScriptedReply(status=status), ScriptedReply(OK)]) as server:
        with pytest.raises(ModelError) as caught:
            complete(fast_caller(server.connection()))
        assert len(server.requests) == 1
    assert caught.value.kind == kind
    assert caught.value.status == status


def test_an_auth_failure_names_the_variable_to_set_and_never_shows_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCRIPTED_KEY", "sk-test-secret-123")
    echo = ScriptedReply("Incorrect API key provided: sk-test-secret-123", status=401)
    with ScriptedModelServer([echo]) as server:
        connection = server.connection().model_copy(update={"api_key_env": "SCRIPTED_KEY"})
        with pytest.raises(ModelError) as caught:
            complete(fast_caller(connection))
        assert server.requests[0].headers["authorization"] == "Bearer sk-test-secret-123"
    message = str(caught.value)
    assert caught.value.kind == "auth"
    assert "SCRIPTED_KEY" in message
    assert "sk-test-secret-123" not in message
    assert "[redacted]" in message


def test_a_key_variable_that_is_unset_fails_before_any_request() -> None:
    with ScriptedModelServer([ScriptedReply(OK)]) as server:
        connection = server.connection().model_copy(update={"api_key_env": "NOT_SET_ANYWHERE"})
        with pytest.raises(ModelError, match="NOT_SET_ANYWHERE") as caught:
            complete(fast_caller(connection))
        assert server.requests == []
    assert caught.value.kind == "config"


def test_cancelling_during_the_retry_wait_means_no_second_request() -> None:
    recorder = RecordedCalls()
    waiting_to_retry = anyio.Event()

    async def retry_wait(seconds: float) -> None:
        waiting_to_retry.set()
        await anyio.sleep(1)  # cancelled at once, unless cancellation failed to win

    async def scenario(server: ScriptedModelServer) -> bool:
        caller = PooledCaller(
            server.connection(),
            PoolLimits(),
            pool=ModelPool(),
            recorder=recorder,
            timing=CallTiming(stage_timeout_s=30, sleep=retry_wait),
            attempt=provider_attempt(server.connection()),
        )
        with anyio.fail_after(5), anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(caller.complete, ask())
                await waiting_to_retry.wait()
                scope.cancel()
        return scope.cancelled_caught

    with ScriptedModelServer([ScriptedReply(status=429), ScriptedReply(OK)]) as server:
        assert anyio.run(scenario, server)
        assert len(server.requests) == 1
    assert recorder.outcomes == ["rate_limited"]


def test_the_retry_waits_at_least_half_a_second() -> None:
    arrivals: list[float] = []
    replies = [ScriptedReply(status=429), ScriptedReply(OK)]

    def responder(request: RecordedRequest) -> ScriptedReply:
        arrivals.append(time.monotonic())
        return replies[len(arrivals) - 1]

    with ScriptedModelServer(responder=responder) as server:
        caller = open_caller(server.connection(), limits=PoolLimits())
        assert complete(caller).data == OK
    assert len(arrivals) == 2
    assert arrivals[1] - arrivals[0] >= 0.5


def test_finish_reason_length_is_a_failure_that_is_not_retried_and_keeps_its_usage() -> None:
    recorder = RecordedCalls()
    cut = ScriptedReply(OK, finish_reason="length", input_tokens=50, output_tokens=2048)
    with ScriptedModelServer([cut, ScriptedReply(OK)]) as server:
        with pytest.raises(ModelError) as caught:
            complete(fast_caller(server.connection(), recorder=recorder))
        assert len(server.requests) == 1
    assert caught.value.kind == "length"
    [(_, _, attempts)] = recorder.calls
    assert [(a.outcome, a.input_tokens, a.output_tokens) for a in attempts] == [
        ("length", 50, 2048)
    ]


def test_text_that_is_not_a_json_object_comes_back_without_data() -> None:
    replies = [ScriptedReply("I think it is fine."), ScriptedReply("[1, 2]")]
    with ScriptedModelServer(replies) as server:
        caller = fast_caller(server.connection())
        prose, array = complete(caller), complete(caller)
    assert (prose.data, prose.text) == (None, "I think it is fine.")
    assert (array.data, array.text) == (None, "[1, 2]")


def test_usage_the_provider_did_not_report_stays_unknown() -> None:
    silent = ScriptedReply(OK, input_tokens=None, output_tokens=None)
    with ScriptedModelServer([silent]) as server:
        response = complete(fast_caller(server.connection()))
    assert (response.attempts[0].input_tokens, response.attempts[0].output_tokens) == (None, None)


def test_failed_attempts_are_recorded_in_the_store_before_the_error_propagates(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path / "p.db")
    replies = [ScriptedReply(status=503, input_tokens=None), ScriptedReply(status=503)]
    with ScriptedModelServer(replies) as server:
        caller = open_caller(
            server.connection(), limits=PoolLimits(), recorder=store_recorder(store)
        )
        request = ask(stage="supervise", target_id="conv-1", run_id="run-1")
        with pytest.raises(ModelError):
            anyio.run(caller.complete, request)
    usage = store.model_usage(run_id="run-1")
    assert (usage.calls, usage.unknown_usage) == (2, 2)
    assert store.model_usage(target_id="conv-1").calls == 2
    store.close()


def test_limits_are_frozen_when_the_caller_opens(tmp_path: Path) -> None:
    store = open_store(tmp_path / "p.db")
    set_pool_limits(store, PoolLimits(capacity_kib=100, stage_timeout_s=30))
    replies = [ScriptedReply(OK, pad_to_bytes=200 * 1024)] * 2
    with ScriptedModelServer(replies) as server:
        running = open_caller(server.connection(), limits=pool_limits(store))
        set_pool_limits(store, PoolLimits(capacity_kib=16384, stage_timeout_s=600))
        with pytest.raises(ModelError) as caught:
            complete(running)
        later = open_caller(server.connection(), limits=pool_limits(store))
        assert complete(later).data == OK
    assert caught.value.kind == "capacity"
    assert (running.limits.stage_timeout_s, running.limits.capacity_kib) == (30, 100)
    assert (later.limits.stage_timeout_s, later.limits.capacity_kib) == (600, 16384)
    store.close()


def test_requests_to_a_remote_endpoint_are_refused_when_model_requests_are_off() -> None:
    connection = ModelConnection(
        name="remote", provider="openai", model="gpt", base_url="https://api.example.com/v1"
    )
    with pytest.raises(ModelError, match="PROCTOR_ALLOW_MODEL_REQUESTS") as caught:
        complete(fast_caller(connection))
    assert caught.value.kind == "config"


def test_calls_start_in_arrival_order_with_one_slot() -> None:
    gate = threading.Event()

    def responder(request: RecordedRequest) -> ScriptedReply:
        gate.wait(timeout=10)
        return ScriptedReply(OK)

    async def scenario(caller: PooledCaller) -> None:
        async def call(text: str, *, task_status: anyio.abc.TaskStatus[None]) -> None:
            task_status.started()
            await caller.complete(ask(text))

        async with anyio.create_task_group() as group:
            for text in ("first", "second", "third"):
                await group.start(call, text)
            gate.set()

    with ScriptedModelServer(responder=responder) as server:
        anyio.run(scenario, fast_caller(server.connection()))
        order = [r.text_of("user") for r in server.requests]
    assert order == ["first", "second", "third"]
