"""What the StatefulSet controller's own code costs per gang set (a script, not a test):

    python -m bench.micro.stsgang_cpu [--sets 300] [--replicas 3] [--rounds 3]

A plane running the StatefulSet controller alone (with its KEP-6277 hook). Its work queue is cut
off (``enqueue`` records nothing), so the script drives ``sync(key)`` itself, one set after the
other, as ``gangs-1000x3`` does twice per set: the **first sync** of a new gang set (it writes the
ControllerRevision, Workload, PodGroup, pods and status) and, once the informers hold all of
that, the **second sync**, which finds everything in place and writes nothing.

For each sync the process CPU (``time.process_time``) of the whole call is split into the time
spent inside the controller's API calls (the client's ``create``/``update``/``update_status``/
``patch``/``delete``), in informer deliveries (``Informer._upsert``/``_remove`` with their
handlers) and in the steps of other tasks that run while the sync awaits its pod creations (the
informers' watch loops, the event recorder), and the rest: the controller's **own** code, which
is what this micro is about. So that API calls do not interleave with the sync, the
controller's client does not yield to the event loop before each call as the in-process client
otherwise does (the call runs to its end at once). Each round uses a fresh namespace.

Compare builds by alternating them (``PYTHONPATH=<tree> python -m bench.micro.stsgang_cpu``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from collections.abc import Awaitable, Callable
from typing import Any

from apiserver.client.informer import Informer
from apiserver.client.interface import NAMESPACES, STATEFULSETS
from bench.workloads.common import start_plane
from bench.workloads.statefulsets import statefulset

WRITES = ("create", "update", "update_status", "patch", "delete")


class ApiClock:
    """Process CPU spent outside the controller's own code: inside the wrapped calls (none of
    which suspends) and in the steps of other tasks (:meth:`foreign_steps`). Nested spans
    count once."""

    def __init__(self) -> None:
        self.spent = 0.0
        self._depth = 0
        self._since = 0.0

    def enter(self) -> None:
        if self._depth == 0:
            self._since = time.process_time()
        self._depth += 1

    def exit(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.spent += time.process_time() - self._since

    def wrap_sync(self, call: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.enter()
            try:
                return call(*args, **kwargs)
            finally:
                self.exit()

        return timed

    def wrap(self, call: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def timed(*args: Any, **kwargs: Any) -> Any:
            self.enter()
            try:
                return await call(*args, **kwargs)
            finally:
                self.exit()

        return timed

    def foreign_steps(self, ours: Callable[[asyncio.Task[Any]], bool]) -> Callable[[], None]:
        """Count every event-loop step of a task ``ours`` rejects (the informers' watch loops,
        the event recorder: they run while a sync awaits its pod creations) as not the sync's.
        Returns the function that undoes it."""
        original = asyncio.Handle._run

        def run(handle: asyncio.Handle) -> None:
            task = getattr(handle._callback, "__self__", None)  # type: ignore[attr-defined]
            if not isinstance(task, asyncio.Task) or ours(task):
                original(handle)
                return
            self.enter()
            try:
                original(handle)
            finally:
                self.exit()

        asyncio.Handle._run = run  # type: ignore[method-assign]

        def undo() -> None:
            asyncio.Handle._run = original  # type: ignore[method-assign]

        return undo


def _sync_task(task: asyncio.Task[Any]) -> bool:
    """The script's own task, and the pod steps a sync runs as tasks (``slow_start_batch``)."""
    qualname = getattr(task.get_coro(), "__qualname__", "")
    return qualname == "run" or qualname.startswith("StatefulSetControl.")


async def _settle(ctrl: Any, namespace: str, sets: int, replicas: int) -> None:
    """Until the controller's informers hold every set's pods, Workload and PodGroup."""
    hook = ctrl.scheduling_hook
    for _ in range(10_000):
        pods = len(ctrl.pods.list(namespace))
        groups = len(hook.pod_groups.list(namespace)) if hook.pod_groups is not None else sets
        if pods >= sets * replicas and groups >= sets:
            break
        await asyncio.sleep(0.01)
    await ctrl.recorder.flush()
    await asyncio.sleep(0.05)


async def run(sets: int, replicas: int, rounds: int) -> None:
    cp = await start_plane(["statefulset-controller"])
    ctrl = cp.components["statefulset-controller"]
    ctrl.enqueue = lambda *a, **k: None
    ctrl.enqueue_after = lambda *a, **k: None
    api = ApiClock()
    for verb in WRITES:
        setattr(ctrl.client, verb, api.wrap(getattr(ctrl.client, verb)))

    async def no_yield() -> None:
        ctrl.client.calls += 1

    ctrl.client._yield = no_yield
    for name in ("_upsert", "_remove"):
        setattr(Informer, name, api.wrap_sync(getattr(Informer, name)))
    undo = api.foreign_steps(_sync_task)
    client = cp.client("bench")
    results: dict[str, list[tuple[float, float]]] = {"first": [], "second": []}
    for r in range(rounds):
        ns = f"stsgang-{r}"
        await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for i in range(sets):
            await client.create(STATEFULSETS, statefulset(f"g{i}", replicas, True, ""), ns)
        while len(ctrl.sets.list(ns)) < sets:
            await asyncio.sleep(0.01)
        keys = [f"{ns}/g{i}" for i in range(sets)]
        for which in ("first", "second"):
            gc.collect()
            gc.disable()  # the collector's passes land on whichever sync allocates last
            total = own = 0.0
            for key in keys:
                before_api = api.spent
                start = time.process_time()
                await ctrl.sync(key)
                spent = time.process_time() - start
                total += spent
                own += spent - (api.spent - before_api)
            gc.enable()
            results[which].append((own * 1e3 / sets, total * 1e3 / sets))
            print(
                f"round {r} {which} sync: own {own * 1e3 / sets:.3f} ms CPU per set, "
                f"with API calls {total * 1e3 / sets:.3f}"
            )
            await _settle(ctrl, ns, sets, replicas)
    for which, rows in results.items():
        owns = sorted(o for o, _ in rows)
        totals = sorted(t for _, t in rows)
        print(
            f"{which} sync: median own {owns[len(owns) // 2]:.3f} ms CPU per set "
            f"(min {owns[0]:.3f}), with API calls {totals[len(totals) // 2]:.3f}"
        )
    undo()
    await cp.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--sets", type=int, default=300)
    ap.add_argument("--replicas", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    asyncio.run(run(args.sets, args.replicas, args.rounds))


if __name__ == "__main__":
    main()
