"""The FIFO pool (SPEC MOD-4): arrival order, the concurrency bound, cancelled waiters."""

from __future__ import annotations

import anyio
import anyio.abc
import pytest

from proctor.models import ModelPool


class Jobs:
    """Jobs that enter the pool in a known order and hold their slot until released."""

    def __init__(self, pool: ModelPool) -> None:
        self.pool = pool
        self.entered: list[int] = []
        self.running = 0
        self.most_at_once = 0
        self.release = anyio.Event()

    async def job(self, number: int, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        task_status.started()  # the job is queued in the pool before `start` returns
        async with self.pool.slot():
            self.entered.append(number)
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
            await self.release.wait()
            self.running -= 1


@pytest.mark.parametrize("concurrency", [1, 2])
def test_calls_start_in_arrival_order_and_never_exceed_the_concurrency(concurrency: int) -> None:
    async def scenario() -> Jobs:
        jobs = Jobs(ModelPool(concurrency))
        async with anyio.create_task_group() as group:
            for number in range(5):
                await group.start(jobs.job, number)
            assert (jobs.pool.in_flight, jobs.pool.waiting) == (concurrency, 5 - concurrency)
            assert jobs.entered == list(range(concurrency))
            jobs.release.set()
        return jobs

    jobs = anyio.run(scenario)
    assert jobs.entered == [0, 1, 2, 3, 4]
    assert jobs.most_at_once == concurrency
    assert (jobs.pool.in_flight, jobs.pool.waiting) == (0, 0)


def test_a_cancelled_waiter_leaves_the_queue_and_the_next_one_gets_the_slot() -> None:
    async def scenario() -> Jobs:
        jobs = Jobs(ModelPool(1))
        async with anyio.create_task_group() as group:
            await group.start(jobs.job, 0)
            with anyio.CancelScope() as doomed:
                async with anyio.create_task_group() as inner:
                    await inner.start(jobs.job, 1)
                    doomed.cancel()
            await group.start(jobs.job, 2)
            assert jobs.pool.waiting == 1
            jobs.release.set()
        return jobs

    jobs = anyio.run(scenario)
    assert jobs.entered == [0, 2]
    assert (jobs.pool.in_flight, jobs.pool.waiting) == (0, 0)


def test_a_pool_serves_one_event_loop_after_another() -> None:
    pool = ModelPool(1)

    async def one_call() -> None:
        async with pool.slot():
            await anyio.lowlevel.checkpoint()

    anyio.run(one_call)
    anyio.run(one_call)
    assert pool.in_flight == 0


@pytest.mark.parametrize("concurrency", [0, 5])
def test_the_concurrency_must_be_between_one_and_four(concurrency: int) -> None:
    with pytest.raises(ValueError, match="1–4"):
        ModelPool(concurrency)
