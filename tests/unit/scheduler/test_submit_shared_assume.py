"""A big gang's submit shortcuts, against the general paths they replace.

* ``Cache.assume_pod(assumed=)`` with the kept placement's PodInfos (``Snapshot.assumed_pods``)
  leaves the cache, the snapshot the next cycle gets and the group states exactly as assuming
  fresh copies (``PodInfo.on_node``) does, through informer-like changes between the search and
  the assumes, forgotten members, stale or misplaced hand-overs and bound pods confirming
  their assumed selves;
* ``Snapshot.assumed_pods`` is the model "last assume of each uid not forgotten or rolled back
  since the last cache update", for random assume/forget/backup/restore sequences;
* ``GangScheduling.allow_group`` allows exactly the waiting pods ``pod_group_key`` matches, in
  the order they began to wait;
* ``Status`` keeps the non-empty reasons in order, as the comprehension did.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from featuregates import FeatureGate
from scheduler.cache import Cache, Snapshot
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import CycleState, Framework, Handle, WaitingPod
from scheduler.interfaces import PodGroupInfo
from scheduler.nodeinfo import PodInfo
from scheduler.podgroups import ASSIGNED, ASSUMED, UNSCHEDULED, PodGroupState, pod_group_key
from scheduler.status import Code, Status
from scheduler.testing import make_node, make_pod
from tests.unit.scheduler.random_gangs import gang_set, seeded_scheduler, zoned_nodes

# --- the cache taking the kept placement's PodInfos ---------------------------------------------


class _Side:
    """One scheduler's cache, snapshot and framework (seeded alike on both sides); ``share``:
    the submit hands the cache the snapshot's assumed PodInfos."""

    def __init__(self, seed: int, nodes: list[Any], share: bool) -> None:
        self.share = share
        self.cache, self.snap, self.fw, self.algorithm = seeded_scheduler(seed, nodes)
        self.shared = 0
        self.adopted = 0

    def place(self, group_obj: Any, infos: list[PodInfo]) -> Any:
        self.cache.update_snapshot(self.snap)
        self.fw.handle.snapshot = self.snap
        ns, name = "default", group_obj["metadata"]["name"]
        self.cache.add_pod_group(group_obj)
        for pi in infos:
            self.cache.add_unscheduled_pod(pi.pod)
        group = PodGroupInfo(
            ns,
            name,
            self.cache.get_pod_group(ns, name),
            list(infos),
            self.cache.pod_group_state(ns, name) or PodGroupState(f"{ns}/{name}"),
        )
        result = self.algorithm.run(CycleState(), group, self.snap, keep_winner=True)
        return result if result.success and result.placement is not None else None

    def submit(self, result: Any, queued: list[PodInfo], r: random.Random, misplace: bool) -> list[PodInfo]:
        """The submit's assumes (``_submit_success``'s hand-over when ``share``)."""
        kept = self.snap.assumed_pods() if result.kept and self.share else {}
        by_uid = {a.pod_info.uid: a for a in result.placement.assignments}
        out = []
        for pi in queued:
            a = by_uid[pi.uid]
            like = kept.get(pi.uid) if a.pod_info is pi else None
            host = a.node_name
            if misplace and like is not None:
                # a hand-over naming another node or another pod (never made by the submit):
                # the cache must refuse it and make its own copy
                others = [p for p in kept.values() if p.uid != pi.uid]
                if others and r.random() < 0.5:
                    like = r.choice(others).on_node(host)
                else:
                    like = like.on_node(
                        r.choice([n for n in sorted(self.cache.nodes) if n != host] or [host])
                    )
            got = self.cache.assume_pod(pi.pod, host, pi, like)
            self.shared += got is like
            out.append(got)
        return out

    def state(self) -> Any:
        cache = self.cache
        pods = {k: tuple(getattr(pi, s) for s in PodInfo.__slots__) for k, pi in cache._pods.items()}
        nodes = {
            n: ([p.key for p in ni.pods], dict(ni.requested), ni.non_zero_cpu, ni.non_zero_memory)
            for n, ni in cache.nodes.items()
        }
        groups = {
            k: (sorted(g.unscheduled), sorted(g.assumed.items()), sorted(g.assigned.items()))
            for k, g in cache.pod_groups._groups.items()
        }
        return pods, nodes, groups, sorted(cache._assumed)

    def check_fresh(self) -> None:
        """After an update the snapshot holds what a fresh copy of the cache holds."""
        self.cache.update_snapshot(self.snap)
        fresh = self.cache.snapshot()
        assert set(self.snap.node_info_map) == set(fresh.node_info_map)
        for name, ni in fresh.node_info_map.items():
            mine = self.snap.node_info_map[name]
            assert [(p.uid, p.node_name, p.pod) for p in mine.pods] == [
                (p.uid, p.node_name, p.pod) for p in ni.pods
            ], name
            assert mine.node is ni.node
            assert (mine.requested, mine.non_zero_cpu, mine.non_zero_memory) == (
                ni.requested,
                ni.non_zero_cpu,
                ni.non_zero_memory,
            )


@pytest.mark.parametrize("seed", range(12))
def test_the_cache_taking_the_kept_podinfos_is_assuming_fresh_copies(seed: int) -> None:
    r = random.Random(seed)
    nodes = zoned_nodes(r, [20, 60, 120])
    shared, plain = _Side(seed, nodes, share=True), _Side(seed, nodes, share=False)
    assumed: list[tuple[Any, str]] = []
    for k in range(40):
        app = f"g{k}"
        size = r.randrange(1, 7)
        cpu = r.choice(["100m", "500m", "1", "1500m"])
        pods, group_obj = gang_set(app, size, cpu)
        infos = {id(side): [PodInfo(p) for p in pods] for side in (shared, plain)}
        results = {id(side): side.place(group_obj, infos[id(side)]) for side in (shared, plain)}
        rs, rp = results[id(shared)], results[id(plain)]
        assert (rs is None) == (rp is None)
        if rs is None:
            continue
        assert [(a.pod_info.uid, a.node_name) for a in rs.placement.assignments] == [
            (a.pod_info.uid, a.node_name) for a in rp.placement.assignments
        ]
        hosts = [a.node_name for a in rs.placement.fitting()]
        # an informer event while the search yielded: another pod lands on a chosen node
        if r.random() < 0.2:
            other = make_pod(f"x{k}", uid=f"x{k}", requests={"cpu": "100m"}, node_name=hosts[0])
            for side in (shared, plain):
                side.cache.add_pod(other)
        # the queue's PodInfo of a member replaced while the search yielded (an update)
        replaced = r.randrange(size) if r.random() < 0.2 else None
        misplace = r.random() < 0.1
        forget = r.random() < 0.2
        for side in (shared, plain):
            queued = list(infos[id(side)])
            if replaced is not None:
                queued[replaced] = PodInfo(queued[replaced].pod)
            side.submit(results[id(side)], queued, r, misplace and side is shared)
            fitting = results[id(side)].placement.fitting()
            if forget:  # a Reserve failure: the first member forgotten
                side.cache.forget_pod(side.cache.get_pod(fitting[0].pod_info.pod))
            side.adopted += side.cache.adopt_assumed(
                side.snap, {a.node_name for a in fitting}, {a.pod_info.uid for a in fitting}
            )
        assert shared.state() == plain.state(), f"gang {k}"
        # the snapshot keeps at least the nodes it kept before: where an earlier gang's copies were
        # both sides' (not only equal ones), a later gang's nodes are kept too (check_fresh below
        # shows what the snapshot then holds is still a fresh copy's)
        assert shared.adopted >= plain.adopted
        if not forget:
            assumed.extend((p, h) for p, h in zip(pods, hosts, strict=True))
        # bound pods confirming their assumed selves, now and then
        if assumed and r.random() < 0.4:
            pod, host = assumed.pop(r.randrange(len(assumed)))
            bound = {**pod, "spec": {**pod["spec"], "nodeName": host}}
            for side in (shared, plain):
                side.cache.add_pod(bound)
        shared.check_fresh()
        plain.check_fresh()
    assert shared.shared > 0  # the hand-over was taken
    assert plain.shared == 0


# --- Snapshot.assumed_pods against a model ----------------------------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_assumed_pods_is_the_last_assume_not_undone(seed: int) -> None:
    r = random.Random(seed)
    cache = Cache()
    for i in range(6):
        cache.add_node(make_node(f"n{i}", cpu="64"))
    snap = Snapshot()
    cache.update_snapshot(snap)
    ops: list[tuple[str, PodInfo]] = []  # the model: every op since the last update, in order
    marks: list[tuple[int, int]] = []
    for _ in range(400):
        x = r.random()
        if x < 0.45:
            pi = PodInfo(make_pod(f"p{r.randrange(12)}", uid=f"u{r.randrange(12)}", requests={"cpu": "1"}))
            node = f"n{r.randrange(6)}"
            snap.assume_pod(pi.on_node(node), node, defer_index=r.random() < 0.5)
            ops.append(("assume", snap._journal[-1][1]))
        elif x < 0.6 and snap.node_info_map:
            node = f"n{r.randrange(6)}"
            pods = snap.node_info_map[node].pods
            if pods:
                pi = r.choice(pods)
                snap.forget_pod(pi, node)
                ops.append(("forget", pi))
        elif x < 0.75:
            marks.append((snap.backup(), len(ops)))
        elif x < 0.9 and marks:
            mark, n = marks.pop(r.randrange(len(marks)))
            snap.restore(mark)
            del ops[n:]
            marks = [(m, k) for m, k in marks if m <= mark]
        else:
            cache.update_snapshot(snap)
            ops.clear()
            marks.clear()
        model: dict[str, PodInfo] = {}
        for op, pi in ops:
            if op == "assume":
                model[pi.uid] = pi
            else:
                model.pop(pi.uid, None)
        got = snap.assumed_pods()
        assert got.keys() == model.keys()
        assert all(got[u] is model[u] for u in model)


# --- GangScheduling.allow_group against pod_group_key -----------------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_allow_group_allows_the_pods_pod_group_key_matches_in_order(seed: int) -> None:
    r = random.Random(seed)

    async def run() -> None:
        for _ in range(60):
            handle = Handle(gates=FeatureGate())
            fw = Framework(default_profile(), handle, registry=default_registry())
            gang = next(pl for pl in fw.permit_plugins if pl.name == "GangScheduling")
            for i in range(r.randrange(0, 30)):
                ns = r.choice(["a", "b", "ab", ""])
                pod = make_pod(f"p{i}", ns, uid=f"u{i}")
                sg = r.choice([None, {}, {"podGroupName": None}, {"podGroupName": ""}, "g", "h", "a"])
                if isinstance(sg, str):
                    pod["spec"]["schedulingGroup"] = {"podGroupName": sg}
                elif sg is not None:
                    pod["spec"]["schedulingGroup"] = sg
                if r.random() < 0.1:
                    pod["spec"] = None
                fw.waiting_pods[f"u{i}"] = WaitingPod(PodInfo(pod), {"GangScheduling": 0.0})
            key = r.choice(["a/g", "b/h", "ab/g", "/g", "a/", "a/a", "b/g"])
            expected = [u for u, wp in fw.waiting_pods.items() if pod_group_key(wp.pod_info.pod) == key]
            order: list[str] = []
            for u, wp in fw.waiting_pods.items():
                wp.outcome().add_done_callback(lambda _f, u=u, order=order: order.append(u))
            gang.allow_group(key)
            await asyncio.sleep(0)
            assert order == expected, key

    asyncio.run(run())


# --- Status reasons ----------------------------------------------------------------------------


def test_status_keeps_the_non_empty_reasons_in_order() -> None:
    r = random.Random(3)
    for _ in range(2000):
        reasons = tuple(r.choice(["", "x", "why", "a, b"]) for _ in range(r.randrange(0, 4)))
        s = Status(Code.UNSCHEDULABLE, *reasons)
        assert s.reasons == [x for x in reasons if x]
        s.reasons.append("more")  # each status owns its list
        assert Status(Code.UNSCHEDULABLE, *reasons).reasons == [x for x in reasons if x]


def test_assume_marks_states() -> None:
    """The hand-over keeps the group state moves of a plain assume (unscheduled -> assumed)."""
    cache = Cache()
    cache.add_node(make_node("n0", cpu="8"))
    pod = make_pod("p", uid="u", requests={"cpu": "1"})
    pod["spec"]["schedulingGroup"] = {"podGroupName": "g"}
    cache.add_unscheduled_pod(pod)
    pi = PodInfo(pod)
    like = pi.on_node("n0")
    got = cache.assume_pod(pod, "n0", pi, like)
    assert got is like
    assert cache.pod_groups.state_of(got.pod) == ASSUMED
    cache.add_pod(got.pod)
    assert cache.pod_groups.state_of(got.pod) == ASSIGNED
    assert UNSCHEDULED != ASSUMED


# --- the PodGroup cycle's submit hands over only what the queue still holds -----------------------


@pytest.mark.anyio
@pytest.mark.parametrize("seed", range(4))
async def test_the_submit_hands_the_cache_the_kept_podinfos_of_unchanged_members_only(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member whose pod was updated while the search yielded (the queue holds a new PodInfo)
    is assumed from that PodInfo, as before; every other member's cache PodInfo is the one the
    kept placement left in the snapshot."""
    from apiserver.client.interface import NODES, PODGROUPS, PODS
    from gangplane.controlplane import ControlPlane
    from scheduler.schedule_one_podgroup import PodGroupCycle
    from scheduler.scheduler import Scheduler

    r = random.Random(seed)
    plane = ControlPlane()
    sched: Scheduler | None = None
    try:
        client = plane.client("kube-scheduler")
        sched = Scheduler(client, seed=1)
        for i in range(r.randrange(2, 6)):
            sched.cache.add_node(await client.create(NODES, make_node(f"n{i}", cpu="8")))
        size = r.randrange(2, 8)
        pg = {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": size}}},
        }
        sched._on_pod_group_add(await client.create(PODGROUPS, pg, "default"))
        for i in range(size):
            p = make_pod(f"g-{i}", labels={"app": "g"}, requests={"cpu": "100m"})
            p["spec"]["schedulingGroup"] = {"podGroupName": "g"}
            created = await client.create(PODS, p, "default")
            sched.pods._items[f"default/g-{i}"] = created  # the informer's store, fed by hand
            sched._on_pod_add(created)
        first = sched.queue.pop_nowait()
        assert first is not None
        kept: dict[str, PodInfo] = {}
        changed: set[str] = set()
        orig = PodGroupCycle._submit_success

        async def submit(self: PodGroupCycle, fw: Any, queued: Any, *a: Any) -> None:
            kept.update(self.sched.snapshot.assumed_pods())
            for q in r.sample(queued, r.randrange(0, len(queued) + 1)):
                pod = q.pod
                meta = {**pod["metadata"], "labels": {**pod["metadata"]["labels"], "changed": "yes"}}
                q.pod_info = PodInfo({**pod, "metadata": meta}, q.pod_info)
                changed.add(q.uid)
            await orig(self, fw, queued, *a)

        monkeypatch.setattr(PodGroupCycle, "_submit_success", submit)
        fw = sched.frameworks["default-scheduler"]
        await sched.pod_group_cycle.schedule_one_podgroup(
            fw, first, sched.cache.get_pod_group("default", "g")
        )
        assert len(kept) == size  # the placement was kept
        for uid, like in kept.items():
            got = sched.cache._pods[like.key]
            want_labels = {"app": "g", "changed": "yes"} if uid in changed else {"app": "g"}
            assert got.labels == want_labels and got.pod["metadata"]["labels"] == want_labels
            assert got.node_name == like.node_name == got.pod["spec"]["nodeName"]
            assert (got is like) == (uid not in changed)
        await sched.wait_idle()
    finally:
        if sched is not None:
            await sched.recorder.stop()
        await plane.stop()


# --- a WaitingPod's future, made only when awaited before the outcome is known -------------------


class _FormerWaitingPod:
    """The WaitingPod with its future made up front (as it was), no timers (they call ``reject``)."""

    def __init__(self, plugins: set[str]) -> None:
        self.pending = set(plugins)
        self._future: asyncio.Future[Status | None] = asyncio.get_running_loop().create_future()

    def allow(self, plugin: str) -> None:
        self.pending.discard(plugin)
        if not self.pending:
            self._finish(None)

    def reject(self, plugin: str, message: str) -> None:
        self._finish(Status(Code.UNSCHEDULABLE, message, plugin=plugin))

    def _finish(self, status: Status | None) -> None:
        if not self._future.done():
            self._future.set_result(status)


@pytest.mark.parametrize("seed", range(10))
def test_a_waiting_pod_without_a_future_up_front_answers_as_with_one(seed: int) -> None:
    r = random.Random(seed)

    async def waiter(wp: Any, new: bool, out: list[Any], via_wait: bool) -> None:
        if via_wait:  # WaitingPod.wait / outcome, the future made when first asked for
            try:
                out.append(("awaited", await (wp.wait() if new else wp._future)))
            except asyncio.CancelledError:
                out.append(("cancelled", None))
            return
        if new:  # Framework.wait_on_permit's way
            done, status = wp.finished()
            if done:
                out.append(("now", status))
                return
        fut = wp.outcome() if new else wp._future
        if not new and fut.done() and not fut.cancelled():
            out.append(("now", fut.result()))  # awaiting it returns in the same step
            return
        try:
            out.append(("later", await fut))
        except asyncio.CancelledError:
            out.append(("cancelled", None))

    async def run() -> None:
        for _ in range(200):
            plugins = {f"P{i}" for i in range(r.randrange(1, 4))}
            new = WaitingPod(PodInfo(make_pod("p", uid="u")), dict.fromkeys(plugins, 0.0))
            old = _FormerWaitingPod(plugins)
            outs: dict[bool, list[Any]] = {True: [], False: []}
            tasks: dict[bool, list[asyncio.Task[None]]] = {True: [], False: []}
            for _ in range(r.randrange(1, 8)):
                x = r.random()
                plugin = r.choice(sorted(plugins) + ["other"])
                if x < 0.35:
                    new.allow(plugin)
                    old.allow(plugin)
                elif x < 0.5:
                    new.reject(plugin, "no")
                    old.reject(plugin, "no")
                elif x < 0.8:
                    via_wait = r.random() < 0.4
                    for flag, wp in ((True, new), (False, old)):
                        tasks[flag].append(
                            asyncio.get_running_loop().create_task(waiter(wp, flag, outs[flag], via_wait))
                        )
                elif tasks[True]:
                    i = r.randrange(len(tasks[True]))
                    for flag in (True, False):
                        tasks[flag][i].cancel()
                await asyncio.sleep(0)
                await asyncio.sleep(0)
                assert outs[True] == outs[False]
            for flag in (True, False):
                for t in tasks[flag]:
                    t.cancel()
            await asyncio.sleep(0)
            assert outs[True] == outs[False]

    asyncio.run(run())


def test_podinfo_compares_by_identity() -> None:
    """``Cache.adopt_assumed`` compares two nodes' pod lists with ``==`` as a shortcut for "the
    same PodInfos": true only while PodInfo has no ``__eq__`` of its own."""
    assert PodInfo.__eq__ is object.__eq__
    a, b = PodInfo(make_pod("p", uid="u")), PodInfo(make_pod("p", uid="u"))
    assert [a] == [a] and [a] != [b]
