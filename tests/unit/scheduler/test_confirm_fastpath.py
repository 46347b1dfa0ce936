"""The scheduler's own bound pods coming back, against the general paths they shortcut.

* ``Cache.add_pod`` confirms an assumed pod whose bound revision has the assumed one's namespace
  and ``spec`` through ``Cache._confirm`` (``PodInfo.confirmed_by``, ``PodGroupStates.confirm``)
  instead of parsing a new PodInfo and moving the pod between group states by its key. On random
  histories (assumes, confirmations by revisions that keep or change the spec, the node, the
  labels, the deletion timestamp, the start time or the group; other schedulers' pods, updates,
  forgets, removals, pending group members, snapshot updates) the cache and a snapshot must be
  exactly what the general path leaves: every node's pods with every PodInfo slot, the
  aggregates, the generations, the recency list, the refreshed marks, the groups' states and
  their dicts' orders.
* ``ParkedPods.candidates`` remembers per event which held groups it leaves out: on random
  sequences of parked and unparked pods (groups and holding plugin sets appearing and going)
  it must answer what asking every group gives.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import pytest

import scheduler.nodeinfo as nodeinfo
from apiserver.api.types import Obj
from scheduler.cache import Cache, Snapshot
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.parked import ParkedPods
from scheduler.podgroups import ASSIGNED, ASSUMED, PodGroupStates
from scheduler.testing import make_node, make_pod

NODES = [f"n{i}" for i in range(5)]
_CONFIRM = Cache._confirm  # the fast path, before a test patches it
ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}
        ]
    }
}


def _pending(rng: random.Random, name: str) -> Obj:
    p = make_pod(
        name,
        namespace=rng.choice(["default", "default", "other"]),
        requests=rng.choice([{"cpu": "100m"}, {"cpu": "200m", "memory": "1Gi"}, None]),
        labels=rng.choice([{"app": "a"}, {"app": "b"}, None]),
        affinity=ANTI if rng.random() < 0.2 else None,
        host_ports=[8080] if rng.random() < 0.15 else None,
    )
    if rng.random() < 0.6:
        p["spec"]["schedulingGroup"] = {"podGroupName": rng.choice(["g1", "g2"])}
    return p


def _bound(rng: random.Random, assumed: Obj, rv: int) -> Obj:
    """A bound revision of ``assumed`` as the informer delivers it: usually only metadata and
    status differ (sometimes the spec values are equal copies, not the same objects); now and
    then something the fast path must not shortcut differs as well."""
    meta = {**assumed["metadata"], "resourceVersion": str(rv), "managedFields": [{"manager": "m"}]}
    spec = dict(assumed["spec"]) if rng.random() < 0.7 else {k: _copy(v) for k, v in assumed["spec"].items()}
    status: Obj = {"conditions": [{"type": "PodScheduled", "status": "True"}]}
    r = rng.random()
    if r < 0.08:
        meta["labels"] = {"app": "c"}
    elif r < 0.14:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    elif r < 0.2:
        status["startTime"] = "2026-01-01T00:00:01Z"
    elif r < 0.28:
        spec["containers"] = [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "300m"}}}]
    elif r < 0.36:
        spec["nodeName"] = rng.choice(NODES)  # landed elsewhere (or, by chance, where assumed)
    elif r < 0.42:
        spec["schedulingGroup"] = {"podGroupName": "g3"}
    elif r < 0.46:
        spec["affinity"] = ANTI
    return {**assumed, "metadata": meta, "spec": spec, "status": status}


def _copy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


def _pod_info(pi: PodInfo, known: dict[str, Obj] | None = None) -> tuple[Any, ...]:
    """Every slot; the pod by value, and whether it is the revision the informer delivered last."""
    delivered = known is not None and pi.pod is known.get(pi.key)
    return (delivered, *((s, getattr(pi, s)) for s in PodInfo.__slots__))


def _node_info(ni: NodeInfo | None, known: dict[str, Obj]) -> Any:
    if ni is None:
        return None
    return (
        ni.name,
        ni.node is not None,
        [_pod_info(p, known) for p in ni.pods],
        [p.key for p in ni.pods_with_affinity],
        [p.key for p in ni.pods_with_required_anti_affinity],
        sorted(ni.requested.items()),
        ni.non_zero_cpu,
        ni.non_zero_memory,
        repr(sorted(ni.used_ports._by_ip.items())),
        ni.generation,
        ni.memo,
    )


def _groups(states: PodGroupStates) -> Any:
    return (
        [
            (k, list(g.unscheduled), list(g.assumed.items()), list(g.assigned.items()))
            for k, g in states._groups.items()
        ],
        list(states._where.items()),
    )


def _dump(cache: Cache, snap: Snapshot, known: dict[str, Obj]) -> Any:
    return (
        [(name, _node_info(ni, known)) for name, ni in cache.nodes.items()],
        list(cache._recent),
        dict(cache._refreshed),
        [(k, _pod_info(pi, known)) for k, pi in cache._pods.items()],
        sorted(cache._assumed),
        _groups(cache.pod_groups),
        snap.generation,
        [(name, _node_info(ni, known)) for name, ni in sorted(snap.node_info_map.items())],
    )


def gated_fast_path(
    monkeypatch: pytest.MonkeyPatch,
    attr: str,
    fast_path: Callable[[Cache, str, PodInfo, Obj], bool],
    fast: bool,
) -> list[int]:
    """Patch ``Cache.<attr>`` (a confirmation fast path: True when it handled the pod) to refuse
    every pod unless ``fast``, and else to run ``fast_path`` and count the pods it took; the count
    is the returned list's one item."""
    taken = [0]

    def gated(self: Cache, key: str, old: PodInfo, pod: Obj) -> bool:
        if not fast:
            return False
        done = fast_path(self, key, old, pod)
        taken[0] += done
        return done

    monkeypatch.setattr(Cache, attr, gated)
    return taken


def _history(
    seed: int, fast: bool, monkeypatch: pytest.MonkeyPatch, dump: bool = True
) -> tuple[list[Any], int]:
    """The dumps after every step of one random history (``dump``), and how many confirmations
    took the fast path."""
    monkeypatch.setattr(nodeinfo, "_generation", itertools.count(1))
    rng = random.Random(seed)
    cache = Cache()
    taken = gated_fast_path(monkeypatch, "_confirm", _CONFIRM, fast)
    snap = Snapshot()
    for n in NODES:
        cache.add_node(make_node(n))
    pending = {f"p{i}": _pending(rng, f"p{i}") for i in range(24)}
    # the revision each pod's informer holds: the keys are the pods' own (namespace/name)
    known: dict[str, Obj] = {}
    dumps = []
    rv = 100
    for _step in range(160):
        rv += 1
        r = rng.random()
        name = rng.choice(list(pending))
        pod = pending[name]
        key = f"{pod['metadata']['namespace']}/{name}"
        in_cache = key in cache._pods
        assumed = key in cache._assumed
        if r < 0.3 and not in_cache:
            if rng.random() < 0.5:
                cache.assume_pod(pod, rng.choice(NODES), PodInfo(pod))
            else:
                cache.assume_pod({**pod, "spec": {**pod["spec"], "nodeName": rng.choice(NODES)}})
        elif r < 0.62 and assumed:
            new = _bound(rng, cache._pods[key].pod, rv)
            known[key] = new
            cache.add_pod(new)
        elif r < 0.68 and not in_cache:
            new = _bound(rng, {**pod, "spec": {**pod["spec"], "nodeName": rng.choice(NODES)}}, rv)
            known[key] = new
            cache.add_pod(new)  # another scheduler's pod
        elif r < 0.74 and in_cache and not assumed:
            cur = cache._pods[key].pod
            new = {**cur, "metadata": {**cur["metadata"], "labels": {"app": rng.choice("abc")}}}
            cache.update_pod(cur, new)
        elif r < 0.8 and assumed:
            cache.forget_pod(cache._pods[key].pod)
        elif r < 0.85 and in_cache:
            cache.remove_pod(cache._pods[key].pod)
        elif r < 0.9 and not in_cache:
            cache.add_unscheduled_pod(pod)
        else:
            cache.update_snapshot(snap)
        if dump:
            dumps.append(_dump(cache, snap, known))
    return dumps, taken[0]


@pytest.mark.parametrize("seed", range(24))
def test_confirming_an_assumed_pod_leaves_what_the_general_path_leaves(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    general, none = _history(seed, False, monkeypatch)
    fast, _ = _history(seed, True, monkeypatch)
    assert none == 0
    for step, (a, b) in enumerate(zip(general, fast, strict=True)):
        assert a == b, f"seed {seed} step {step}"


def test_the_histories_exercise_the_fast_path_and_the_fallbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    took = [_history(seed, True, monkeypatch, dump=False)[1] for seed in range(24)]
    assert sum(took) > 100 and sum(1 for t in took if t) > 18


@pytest.mark.parametrize("seed", range(20))
def test_confirmed_by_is_the_podinfo_parsed_like_the_assumed_one(seed: int) -> None:
    rng = random.Random(seed)
    for i in range(60):
        pod = _pending(rng, f"p{i}")
        assumed = PodInfo(pod).on_node(rng.choice(NODES))
        new = _bound(rng, assumed.pod, 1000 + i)
        if rng.random() < 0.1:
            new = {**new, "metadata": {**new["metadata"], "name": "renamed"}}
        if rng.random() < 0.1:
            new = {**new, "metadata": {**new["metadata"], "namespace": "elsewhere"}}
        got = assumed.confirmed_by(new)
        want = PodInfo(new, assumed)
        same = (new["spec"] == assumed.pod["spec"]) and new["metadata"]["name"] == assumed.name
        same = same and new["metadata"]["namespace"] == assumed.namespace
        if not same:
            assert got is None, (seed, i)
            continue
        assert got is not None, (seed, i)
        assert _pod_info(got) == _pod_info(want), (seed, i)


@pytest.mark.parametrize("seed", range(20))
def test_group_confirm_is_set_assigned(seed: int) -> None:
    rng = random.Random(seed)
    a, b = PodGroupStates(), PodGroupStates()
    pods = [_pending(rng, f"p{i}") for i in range(20)]
    for _ in range(300):
        pod = rng.choice(pods)
        meta = pod["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        r = rng.random()
        if r < 0.4:
            state, node = rng.choice([("unscheduled", ""), (ASSUMED, rng.choice(NODES)), (ASSIGNED, "n1")])
            a.set(pod, state, node, key)
            b.set(pod, state, node, key)
        elif r < 0.5:
            a.remove(pod)
            b.remove(pod)
        else:
            node = rng.choice(NODES)
            if a._where.get(key, ("", ""))[1] == ASSUMED:
                a.set(pod, ASSIGNED, node, key)
                assert b.confirm(key, node)
            else:
                assert not b.confirm(key, node)
        assert _groups(a) == _groups(b)


def _parked_run(seed: int) -> None:
    rng = random.Random(seed)
    parked = ParkedPods()
    plugin_sets = [frozenset({"GangScheduling"}), frozenset({"A"}), frozenset({"A", "B"}), frozenset({"B"})]
    # one fixed answer per memo key, as the queue's per-event answers are
    answers = {ev: {s: rng.random() < 0.6 for s in plugin_sets} for ev in ("e1", "e2", "e3")}
    uids: list[str] = []
    for i in range(400):
        r = rng.random()
        if r < 0.55 or not uids:
            uid = rng.choice(uids) if uids and rng.random() < 0.2 else f"u{i}"
            q = _Parked(
                uid, rng.choice(["g1", "g2", "g3", "g4", ""]), rng.random() < 0.8, rng.choice(plugin_sets)
            )
            parked[uid] = q  # type: ignore[assignment]
            if uid not in uids:
                uids.append(uid)
        elif r < 0.8:
            uid = rng.choice(uids)
            uids.remove(uid)
            if rng.random() < 0.5:
                del parked[uid]
            else:
                parked.pop(uid)
        ev = rng.choice(list(answers))
        group = rng.choice(["default/g1", "default/g2", "default/g3", ""])
        ans = answers[ev]
        memo = parked.candidates(group, lambda s, ans=ans: ans[s], ev)  # type: ignore[misc]
        scan = parked.candidates(group, lambda s, ans=ans: ans[s])  # type: ignore[misc]
        assert [q.uid for q in memo] == [q.uid for q in scan], (seed, i)


class _Parked:
    """The parts of a QueuedPodInfo that ParkedPods reads."""

    def __init__(self, uid: str, group: str, gated: bool, plugins: frozenset[str]) -> None:
        self.uid = uid
        self.gated = gated
        self.unschedulable_plugins = set(plugins)
        self.pod: Obj = make_pod(uid)
        if group:
            self.pod["spec"]["schedulingGroup"] = {"podGroupName": group}


@pytest.mark.parametrize("seed", range(30))
def test_held_groups_left_out_from_memory_are_those_a_scan_leaves_out(seed: int) -> None:
    _parked_run(seed)
