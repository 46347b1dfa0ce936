"""The work queue: de-duplication, one worker per key, rate-limited retries."""

from __future__ import annotations

import asyncio

import pytest

from apiserver.client.workqueue import ShutDown, WorkQueue

pytestmark = pytest.mark.anyio


async def test_dedup_and_fifo() -> None:
    q: WorkQueue[str] = WorkQueue()
    for k in ("a", "b", "a", "c", "b"):
        q.add(k)
    assert len(q) == 3
    assert [await q.get() for _ in range(3)] == ["a", "b", "c"]


async def test_key_readded_while_processing_runs_again_after_done() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    k = await q.get()
    q.add("a")  # arrives while "a" is processing: must not be handed out concurrently
    assert len(q) == 0
    q.done(k)
    assert await q.get() == "a"


async def test_rate_limited_backoff_doubles_and_forget_resets() -> None:
    q: WorkQueue[str] = WorkQueue(base_delay=0.001, max_delay=0.004)
    delays = []
    for _ in range(4):
        delays.append(q.when("k"))
        q.add_rate_limited("k")
        assert await asyncio.wait_for(q.get(), 1) == "k"
        q.done("k")
    assert delays == [0.001, 0.002, 0.004, 0.004]
    assert q.num_requeues("k") == 4
    q.forget("k")
    assert q.when("k") == 0.001


async def test_add_after_keeps_the_earliest() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add_after("k", 5)
    q.add_after("k", 0.001)
    assert await asyncio.wait_for(q.get(), 1) == "k"


async def test_shutdown_wakes_getters() -> None:
    q: WorkQueue[str] = WorkQueue()
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.shutdown()
    with pytest.raises(ShutDown):
        await asyncio.wait_for(getter, 1)


async def test_add_at_keeps_the_earliest_deadline() -> None:
    q: WorkQueue[str] = WorkQueue()
    loop = asyncio.get_running_loop()
    far = loop.time() + 5
    q.add_at("k", far)
    first = q._waiting["k"]
    q.add_at("k", far)  # the same deadline: the timer stays
    q.add_at("k", far + 1)  # a later one: the earlier stays
    assert q._waiting["k"] is first and not first.cancelled()
    q.add_at("k", loop.time() + 0.001)  # an earlier one replaces it
    assert first.cancelled()
    assert await asyncio.wait_for(q.get(), 1) == "k"


async def test_add_at_a_past_deadline_adds_at_once() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add_at("k", asyncio.get_running_loop().time() - 1)
    assert len(q) == 1 and not q._waiting


async def test_a_queue_told_its_loop_sets_its_timers_there() -> None:
    """``run_on``: the owner's loop, kept for delayed adds (no running-loop lookup per add)."""
    q: WorkQueue[str] = WorkQueue()
    q.run_on(asyncio.get_running_loop())
    q.add_after("a", 0.001)
    q.add_at("b", asyncio.get_running_loop().time() + 0.002)
    assert [await asyncio.wait_for(q.get(), 5) for _ in range(2)] == ["a", "b"]


async def test_a_queue_told_a_loop_that_is_not_running_sets_its_timers_on_the_running_one() -> None:
    """A kept loop that does not run (its owner's, closed or never started) is not used: the
    timer goes to the running loop, and the key comes out (it would wait forever otherwise)."""
    q: WorkQueue[str] = WorkQueue()
    other = asyncio.new_event_loop()
    try:
        q.run_on(other)
        q.add_after("a", 0.001)
        assert await asyncio.wait_for(q.get(), 5) == "a"
    finally:
        other.close()
