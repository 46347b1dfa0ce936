"""A slow-start batch run by :func:`run_batch` (a batch of one in place, larger ones as tasks
awaited in order) behaves exactly as the general ``gather`` form (:func:`gather_batch`).

Differential, randomized: the same calls (each suspending a random number of times, then
returning True/False or raising an error or a cancellation of its own) are run through
``slow_start_batch`` with either runner. What ran, in which order (every start, suspension and
end), how many succeeded and what was raised must be the same. Then one level up: two
:class:`StatefulSetControl` (one per runner) sync the same random sets over a client whose
calls suspend and sometimes fail; every API call with its body, every Event and the outcome
must be the same, in the same order.
"""

from __future__ import annotations

import asyncio
import copy
import random
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import CONTROLLERREVISIONS
from apiserver.meta import FakeClock
from controllers.statefulset import utils
from controllers.statefulset.batch import BatchRunner, gather_batch, run_batch
from controllers.statefulset.control import StatefulSetControl, slow_start_batch
from controllers.statefulset.pod_control import StatefulPodControl
from tests.unit.controllers.test_statefulset_claim_shortcut import (
    Claims,
    Recorder,
    RecordingClient,
    _claims,
    _pod,
    _set,
)

pytestmark = pytest.mark.anyio

RUNNERS: dict[str, BatchRunner] = {"gather": gather_batch, "fast": run_batch}


def _plan(rnd: random.Random, count: int) -> list[tuple[int, str]]:
    """Per call: how many times it suspends, and how it ends."""
    ends = ["true", "false", "false", "false", "error", "cancel"]
    weights = [2, 10, 10, 10, 1, 0.3]
    return [(rnd.randint(0, 3), rnd.choices(ends, weights)[0]) for _ in range(count)]


async def _run(runner: BatchRunner, plan: list[tuple[int, str]]) -> list[Any]:
    log: list[Any] = []

    async def fn(i: int) -> bool:
        log.append(("start", i))
        steps, end = plan[i]
        for s in range(steps):
            await asyncio.sleep(0)
            log.append(("step", i, s))
        log.append(("end", i))
        if end == "error":
            raise ValueError(f"call {i}")
        if end == "cancel":
            raise asyncio.CancelledError  # (gather re-raises a fresh one: no message to compare)
        return end == "true"

    try:
        done = await slow_start_batch(len(plan), fn, runner=runner)
        log.append(("done", done))
    except (Exception, asyncio.CancelledError) as e:
        log.append(("raised", type(e).__name__, str(e)))
    for _ in range(5):  # anything left running shows in the log
        await asyncio.sleep(0)
    return log


@pytest.mark.parametrize("seed", range(5))
async def test_run_batch_runs_and_reports_as_gather(seed: int) -> None:
    rnd = random.Random(seed)
    ends: set[str] = set()
    for _ in range(200):
        plan = _plan(rnd, rnd.randint(0, 40))
        fast, general = await _run(run_batch, plan), await _run(gather_batch, plan)
        assert fast == general
        ends.add(fast[-1][0] if fast[-1][0] == "done" else fast[-1][1])
    assert ends == {"done", "ValueError", "CancelledError"}


@pytest.mark.parametrize("size", [1, 2, 5])
async def test_cancelling_the_caller_cancels_the_whole_batch(size: int) -> None:
    for runner in RUNNERS.values():
        started: list[int] = []
        finished: list[int] = []

        async def fn(i: int, started: list[int] = started, finished: list[int] = finished) -> bool:
            started.append(i)
            await asyncio.sleep(3600)
            finished.append(i)
            return False

        caller = asyncio.create_task(slow_start_batch(size, fn, initial=size, runner=runner))
        for _ in range(3):
            await asyncio.sleep(0)
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        for _ in range(3):
            await asyncio.sleep(0)
        assert started == list(range(size)) and finished == []
        leftover = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert not [t for t in leftover if "fn" in repr(t.get_coro())]


class SuspendingClient(RecordingClient):
    """Each call suspends a random number of times first (as the in-process client yields), and a
    pod create sometimes fails."""

    def __init__(self, log: list[Any], rnd: random.Random) -> None:
        super().__init__(log)
        self.rnd = rnd

    async def _pause(self) -> None:
        for _ in range(self.rnd.randint(0, 2)):
            await asyncio.sleep(0)

    async def create(self, gvr: Any, body: Obj, namespace: str = "", **kw: Any) -> Obj:
        await self._pause()
        if gvr.resource == "pods" and self.rnd.random() < 0.08:
            self.log.append(("failed create", body["metadata"]["name"]))
            raise errors.StatusError(500, "InternalError", "injected")
        return await super().create(gvr, body, namespace, **kw)

    async def update(self, gvr: Any, body: Obj, namespace: str = "", **kw: Any) -> Obj:
        await self._pause()
        return await super().update(gvr, body, namespace, **kw)

    async def delete(self, gvr: Any, name: str, namespace: str = "", **kw: Any) -> None:
        await self._pause()
        await super().delete(gvr, name, namespace, **kw)


async def _sync(
    runner: BatchRunner, seed: int, sts: Obj, pods: list[Obj], claims: dict[str, Obj]
) -> list[Any]:
    log: list[Any] = []
    client, recorder = SuspendingClient(log, random.Random(seed)), Recorder(log)
    pod_control = StatefulPodControl(client, recorder, Claims(claims))  # type: ignore[arg-type]
    ctl = StatefulSetControl(client, pod_control, recorder, FakeClock(), batch_runner=runner)  # type: ignore[arg-type]
    revision = ctl._new_revision(sts, 1, 0)
    revision["metadata"].update(uid="rev-uid", resourceVersion="5")
    try:
        log.append(("returned", await ctl.update(copy.deepcopy(sts), copy.deepcopy(pods), [revision])))
    except errors.StatusError as e:
        log.append(("raised", str(e)))
    return [c for c in log if c[:2] != ("create", CONTROLLERREVISIONS.resource)]


@pytest.mark.parametrize("seed", range(4))
async def test_a_sync_calls_the_api_as_with_gather(seed: int) -> None:
    rnd = random.Random(seed)
    kinds: set[str] = set()
    for n in range(60):
        sts = _set(rnd)
        sts["spec"]["podManagementPolicy"] = "Parallel"
        sts["spec"]["replicas"] = rnd.randint(1, 12)
        probe = StatefulSetControl(None, None, None, FakeClock())  # type: ignore[arg-type]
        revision = probe._new_revision(sts, 1, 0)["metadata"]["name"]
        pods = [
            _pod(rnd, sts, o, rnd.choice([revision, "web-old"]))
            for o in range(utils.replicas_of(sts) + 2)
            if rnd.random() < 0.4
        ]
        claims = _claims(rnd, sts)
        calls = seed * 1000 + n
        fast = await _sync(run_batch, calls, sts, pods, claims)
        general = await _sync(gather_batch, calls, sts, pods, claims)
        assert fast == general
        kinds.update(str(c[0]) for c in fast)
    assert {"create", "update", "delete", "failed create", "raised", "returned"} <= kinds


def test_the_runners_are_the_ones_compared() -> None:
    run: Callable[..., Awaitable[Any]] = run_batch
    assert StatefulSetControl(None, None, None, FakeClock()).batch_runner is run  # type: ignore[arg-type]
