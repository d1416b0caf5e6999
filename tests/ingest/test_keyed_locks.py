"""Per-conversation locks of live intake: other keys go on, one key takes turns."""

from __future__ import annotations

import threading

from proctor.ingest._keyed_locks import KeyedLocks


def test_holders_of_different_keys_go_on_at_once() -> None:
    locks = KeyedLocks()
    inside, release = threading.Event(), threading.Event()

    def hold_a() -> None:
        with locks.holding(["a"]):
            inside.set()
            release.wait(timeout=30)

    holder = threading.Thread(target=hold_a)
    holder.start()
    try:
        assert inside.wait(timeout=30)
        done = threading.Event()

        def hold_b() -> None:
            with locks.holding(["b", "c"]):
                done.set()

        other = threading.Thread(target=hold_b)
        other.start()
        assert done.wait(timeout=30), "a holder of other keys waited"
        other.join(timeout=30)
    finally:
        release.set()
        holder.join(timeout=30)


def test_holders_of_one_key_take_turns() -> None:
    locks = KeyedLocks()
    entered = threading.Event()

    def hold_a_and_b() -> None:
        with locks.holding(["b", "a"]):
            entered.set()

    with locks.holding(["a"]):
        waiting = threading.Thread(target=hold_a_and_b)
        waiting.start()
        # What must not happen cannot be awaited: a short bounded look is the check.
        assert not entered.wait(timeout=0.2), "a second holder of the key got in"
    assert entered.wait(timeout=30)
    waiting.join(timeout=30)


def test_overlapping_key_sets_in_any_order_never_deadlock_and_leave_no_lock_behind() -> None:
    locks = KeyedLocks()
    counts = {"a": 0, "b": 0}

    def work(keys: list[str]) -> None:
        for _ in range(200):
            with locks.holding(keys):
                for key in keys:
                    counts[key] += 1

    threads = [
        threading.Thread(target=work, args=(keys,))
        for keys in (["a", "b"], ["b", "a"], ["a"], ["b"])
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "holders deadlocked"
    assert counts == {"a": 600, "b": 600}
    assert len(locks) == 0
