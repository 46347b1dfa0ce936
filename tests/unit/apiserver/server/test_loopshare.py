"""The in-process client's loop-share policy (:mod:`apiserver.server.loopshare`).

The first ``requests`` requests of a task's step run at once; any further request of the step
gives the loop back first. Checked against a plain model of that rule on random request sequences
of several tasks, some woken in the same loop pass, for several budgets, and on real
:class:`LocalClient` requests: a ready task runs within every ``requests`` requests of a busy task
(thousands in a loop included), a task's single request takes no turn, ``every=True`` turns before
every request as the client did before, a request's answer is the same whichever way it went, and
the Event recorder writes a backlog one Event per turn.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from apiserver.client.events import NORMAL, EventRecorder
from apiserver.client.interface import CONFIGMAPS, NAMESPACES
from apiserver.meta import FakeClock as MetaFakeClock
from apiserver.server.instance import build_api
from apiserver.server.localclient import LocalClient
from apiserver.server.loopshare import LoopShare

pytestmark = pytest.mark.anyio


def _model(log: list[tuple[int, int, int]], budget: int) -> list[bool]:
    """The documented rule replayed over ``(task, step at the call, step it ran in)`` requests in
    the order they ran: a request turns iff its task's step already ran ``budget`` requests."""
    ran: dict[tuple[int, int], int] = {}
    turned: list[bool] = []
    for task, called, runs in log:
        turned.append(ran.get((task, called), 0) >= budget)
        ran[(task, runs)] = ran.get((task, runs), 0) + 1
    return turned


async def _replay(
    passes: list[list[tuple[int, int]]], budget: int
) -> tuple[list[tuple[int, int, int]], list[bool], int]:
    """Run ``passes``: in each, the named tasks are woken together (so their steps share a loop
    pass, before any release) and each makes its number of requests in a row, giving the loop
    back whenever ``due`` says so. Returns the requests as :func:`_model` reads them, what ``due``
    said for each, and the share's turn count."""
    share = LoopShare(requests=budget)
    tasks = 1 + max((t for p in passes for t, _ in p), default=0)
    log: list[tuple[int, int, int]] = []
    seen: list[bool] = []
    steps = [0] * tasks
    queues: list[asyncio.Queue[int | None]] = [asyncio.Queue() for _ in range(tasks)]
    left = [0]
    done = asyncio.Event()

    async def worker(task: int) -> None:
        while (count := await queues[task].get()) is not None:
            steps[task] += 1
            for _ in range(count):
                called = steps[task]
                turn = share.due()
                if turn:
                    await asyncio.sleep(0)
                    steps[task] += 1
                    share.resumed()
                log.append((task, called, steps[task]))
                seen.append(turn)  # in the order of the log (a task's own requests stay in order)
            left[0] -= 1
            if not left[0]:
                done.set()

    workers = [asyncio.create_task(worker(t)) for t in range(tasks)]
    for p in passes:
        done.clear()
        left[0] = len(p)
        for task, count in p:
            queues[task].put_nowait(count)
        await done.wait()
    for q in queues:
        q.put_nowait(None)
    await asyncio.gather(*workers)
    return log, seen, share.turns


@pytest.mark.parametrize("seed", range(6))
async def test_due_follows_the_rule_for_random_request_sequences(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(30):
        tasks = rnd.randint(1, 4)
        budget = rnd.choice([1, 2, 4])
        passes = [
            [(t, rnd.choice([1, 1, 2, 3, 4, 5, 9])) for t in rnd.sample(range(tasks), rnd.randint(1, tasks))]
            for _ in range(rnd.randint(1, 12))
        ]
        log, seen, turns = await _replay(passes, budget)
        assert seen == _model(log, budget)
        assert turns == sum(seen)
        assert len(seen) == sum(c for p in passes for _, c in p)


def _client(share: LoopShare) -> LocalClient:
    return LocalClient(build_api(), loop_share=share)


async def _ticker(ticks: list[int]) -> None:
    while True:
        ticks[0] += 1
        await asyncio.sleep(0)


async def test_a_task_s_single_request_takes_no_turn() -> None:
    """Tasks that each make one request (a binding, a pod create) run it in their first step."""
    client = _client(LoopShare())
    ticks = [0]
    tick = asyncio.create_task(_ticker(ticks))
    await asyncio.sleep(0)
    spans: list[tuple[int, int]] = []

    async def one(i: int) -> None:
        before = ticks[0]
        await client.create(CONFIGMAPS, {"metadata": {"name": f"c{i}"}}, "default")
        spans.append((before, ticks[0]))

    await asyncio.gather(*(one(i) for i in range(50)))
    tick.cancel()
    assert client.loop_share.turns == 0
    assert all(a == b for a, b in spans)


async def test_a_ready_task_runs_within_every_budget_of_a_busy_task_s_requests() -> None:
    """Thousands of requests in one loop: the ticker runs after every ``requests`` of them."""
    client = _client(LoopShare())
    budget = client.loop_share.requests
    ticks = [0]
    tick = asyncio.create_task(_ticker(ticks))
    await asyncio.sleep(0)
    seen = []
    for i in range(3000):
        await client.create(CONFIGMAPS, {"metadata": {"name": f"c{i}"}}, "default")
        seen.append(ticks[0])
    tick.cancel()
    assert all(b > a for a, b in zip(seen, seen[budget:], strict=False))
    assert client.loop_share.turns == (3000 - 1) // budget


async def test_every_turns_before_every_request() -> None:
    """``every=True``: the client's former behaviour, one turn per request."""
    client = _client(LoopShare(every=True))
    ticks = [0]
    tick = asyncio.create_task(_ticker(ticks))
    await asyncio.sleep(0)
    seen = [ticks[0]]
    for i in range(50):
        await client.get(NAMESPACES, "default") if i % 2 else await client.list(CONFIGMAPS, "default")
        seen.append(ticks[0])
    tick.cancel()
    assert all(b == a + 1 for a, b in zip(seen, seen[1:], strict=False))
    assert client.loop_share.turns == 50


async def _requests(client: LocalClient, seed: int) -> list[Any]:
    """A random sequence of requests, each made by a task of its own (its step's first request)
    and awaited in turn: their answers (or refusals) in order."""
    rnd = random.Random(seed)
    out: list[Any] = []

    async def one(kind: int, name: str, value: str) -> Any:
        try:
            if kind == 0:
                return await client.create(
                    CONFIGMAPS, {"metadata": {"name": name}, "data": {"k": "v"}}, "default"
                )
            if kind == 1:
                return await client.get(CONFIGMAPS, name, "default")
            if kind == 2:
                return await client.patch(CONFIGMAPS, name, {"data": {"k": value}}, "default")
            if kind == 3:
                return await client.delete(CONFIGMAPS, name, "default")
            lst = await client.list(CONFIGMAPS, "default")
            return [i["metadata"]["name"] for i in lst["items"]]
        except Exception as e:  # noqa: BLE001 - the refusal is part of the answer compared
            return ("error", type(e).__name__, getattr(e, "code", None))

    for _ in range(60):
        kind, name, value = rnd.randrange(5), f"c{rnd.randrange(6)}", str(rnd.random())
        out.append(await asyncio.create_task(one(kind, name, value)))
    return out


def _normal(answers: list[Any]) -> list[Any]:
    """Answers without what two fresh servers differ in (uids, timestamps, resourceVersions)."""

    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {
                k: strip(v)
                for k, v in x.items()
                if k not in ("uid", "creationTimestamp", "time", "resourceVersion")
            }
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return [strip(a) for a in answers]


@pytest.mark.parametrize("seed", range(3))
async def test_answers_are_the_same_with_or_without_the_turn(seed: int) -> None:
    """The turn is only where the loop is given back: a request's answer does not depend on it."""
    turning = _client(LoopShare(every=True))
    every = await _requests(turning, seed)
    first = _client(LoopShare())
    whole = await _requests(first, seed)
    assert turning.loop_share.turns == 60 and first.loop_share.turns == 0
    assert _normal(whole) == _normal(every)


async def test_an_event_backlog_is_written_one_event_per_turn() -> None:
    """The recorder gives the loop back before each Event itself (its write is then its step's
    first request), so a ready task runs between any two Events, as before the policy."""
    client = _client(LoopShare())
    await client.create(NAMESPACES, {"metadata": {"name": "ns"}})
    rec = EventRecorder(client, "tester", clock=MetaFakeClock())
    ticks = [0]
    tick = asyncio.create_task(_ticker(ticks))
    written: list[int] = []
    real_write = rec._write

    async def write(*args: Any) -> bool:
        wrote = await real_write(*args)
        written.append(ticks[0])
        return wrote

    rec._write = write  # type: ignore[method-assign]
    for i in range(40):
        pod = {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": f"p{i}", "namespace": "ns", "uid": f"u{i}"},
        }
        rec.event(pod, NORMAL, "Scheduled", f"pod {i}")
    await rec.flush()
    tick.cancel()
    assert len(written) == 40
    assert all(b > a for a, b in zip(written, written[1:], strict=False))
    assert client.loop_share.turns == 0


def test_a_release_left_pending_on_another_loop_does_not_serve_this_one() -> None:
    """One release serves every step started while it is pending, but only on its own loop: a
    loop stopped with a release not yet run (a test's, a restarted plane's) leaves the next loop
    to schedule its own, and a task's next step there is a new step (its first request runs)."""
    share = LoopShare(requests=1)
    first = asyncio.new_event_loop()

    async def request_then_stop() -> None:
        assert share.due() is False  # the step's first request: a release is now pending
        asyncio.get_running_loop().stop()  # the loop ends this pass, the release not run

    first.create_task(request_then_stop())
    first.run_forever()
    answers: list[bool] = []

    async def two_steps() -> None:
        answers.append(share.due())
        await asyncio.sleep(0)  # the step ends: its release must run before the next one
        answers.append(share.due())
        answers.append(share.due())

    second = asyncio.new_event_loop()
    try:
        second.run_until_complete(two_steps())
    finally:
        second.close()
        first.close()
    assert answers == [False, False, True]
    assert share.turns == 1


async def test_the_steps_of_one_pass_share_one_release() -> None:
    """Tasks woken in one pass each make their step's first request: one release is scheduled
    for them all, and each task's next step still starts a new step."""
    share = LoopShare(requests=1)
    loop = asyncio.get_running_loop()
    scheduled = [0]
    call_soon = loop.call_soon

    def counting(callback: Any, *args: Any, **kw: Any) -> Any:
        if getattr(callback, "__func__", None) is LoopShare._release:
            scheduled[0] += 1
        return call_soon(callback, *args, **kw)

    answers: list[list[bool]] = []

    async def member() -> None:
        mine = [share.due()]
        await asyncio.sleep(0)
        mine.append(share.due())
        answers.append(mine)

    loop.call_soon = counting  # type: ignore[method-assign]
    try:
        await asyncio.gather(*(member() for _ in range(50)))
    finally:
        del loop.call_soon
    assert answers == [[False, False]] * 50
    assert share.turns == 0
    assert scheduled[0] == 2  # one for the first steps, one for the second steps


def test_a_share_used_on_a_second_loop_tells_its_steps_apart_as_a_fresh_one() -> None:
    """The share keeps the loop it last saw a task on (to ask for the current task without a
    getpid system call per request). A plane restarted on a new loop, the old one closed, gets
    the answers a fresh share gives there: the old loop runs no task, so the loop is asked for."""

    async def run(share: LoopShare) -> list[bool]:
        said: list[bool] = []

        async def busy() -> None:
            for _ in range(5):
                turn = share.due()
                said.append(turn)
                if turn:
                    await asyncio.sleep(0)
                    share.resumed()

        async def single() -> None:
            said.append(share.due())

        await asyncio.gather(asyncio.create_task(busy()), asyncio.create_task(single()))
        return said

    reused = LoopShare()
    first = asyncio.run(run(reused))
    second = asyncio.run(run(reused))
    fresh = asyncio.run(run(LoopShare()))
    assert first == second == fresh
    assert sum(first) == 2  # the busy task's third and fifth requests turn; the single one never
    assert reused.turns == 4
