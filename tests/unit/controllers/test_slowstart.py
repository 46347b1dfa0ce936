"""``controllers.slowstart.slow_start_batch``: kube's ``slowStartBatch`` shared by the StatefulSet,
ReplicaSet, DaemonSet and Job controllers. Batches double (up to ``cap``), stop after one with a
failure, and report the successes and that failure; batches of at most ``in_place`` calls run
one call after another. (The loop turns are pinned in ``test_statefulset_slow_start_turns.py``.)"""

from __future__ import annotations

import asyncio

import pytest

from controllers.slowstart import slow_start_batch

pytestmark = pytest.mark.anyio


async def _batches(
    count: int, *, in_place: int, cap: int = 0, fail: frozenset[int] = frozenset()
) -> tuple[list[list[int]], int, Exception | None]:
    """The calls grouped by batch (a call joins the open batch while no call has ended since it
    opened: every call of a gathered batch starts before any ends), and the result."""
    batches: list[list[int]] = []
    ended = True

    async def fn(i: int) -> None:
        nonlocal ended
        if ended:
            batches.append([])
            ended = False
        batches[-1].append(i)
        await asyncio.sleep(0)
        ended = True
        if i in fail:
            raise ValueError(i)

    done, err = await slow_start_batch(count, fn, in_place=in_place, cap=cap)
    return batches, done, err


async def test_batches_double_up_to_the_cap_and_all_succeed() -> None:
    batches, done, err = await _batches(20, in_place=0, cap=4)
    assert batches == [[0], [1, 2], [3, 4, 5, 6], [7, 8, 9, 10], [11, 12, 13, 14], [15, 16, 17, 18], [19]]
    assert (done, err) == (20, None)


async def test_in_place_calls_run_one_after_another() -> None:
    batches, done, _ = await _batches(7, in_place=2)
    # the batches of one and two run call by call; the batch of four is gathered
    assert batches == [[0], [1], [2], [3, 4, 5, 6]]
    assert done == 7


@pytest.mark.parametrize("in_place", [0, 2, 4])
async def test_a_failing_batch_is_the_last_and_its_first_failure_is_returned(in_place: int) -> None:
    batches, done, err = await _batches(20, in_place=in_place, fail=frozenset({4, 5}))
    assert sum(batches, []) == list(range(7))  # the batch of 3..6 is made whole, none after it
    assert done == 5
    assert isinstance(err, ValueError) and err.args == (4,)


async def test_a_cancelled_call_in_a_gathered_batch_is_raised() -> None:
    async def fn(i: int) -> None:
        if i == 2:
            raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await slow_start_batch(5, fn, in_place=0)
