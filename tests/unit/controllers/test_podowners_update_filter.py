"""Pod-owner controllers drop a pod update controlled by another kind before anything else.

The ReplicaSet, ReplicationController and DaemonSet controllers see every pod update of the
controllers' shared pod informer; a pod whose controllerRef names another kind before and after
the update (a StatefulSet's) concerns none of them. They now return before resolving anything.
Here each controller gets random pod updates and must queue the same keys, in the same order,
with the same expectations, as the general path (the controller with no kind to filter on):
controllerRefs of its own kind, another kind, stale UIDs, none (orphans selected by labels),
changing or not, and pods being deleted.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver.api.types import Obj
from controllers.daemonset.controller import DaemonSetsController
from controllers.podowners import PodOwnerController
from controllers.replicaset.controller import ReplicaSetController, ReplicationManager

CONTROLLERS: dict[str, tuple[type[PodOwnerController], str, str]] = {
    "replicaset": (ReplicaSetController, "ReplicaSet", "apps/v1"),
    "replicationcontroller": (ReplicationManager, "ReplicationController", "v1"),
    "daemonset": (DaemonSetsController, "DaemonSet", "apps/v1"),
}
FOREIGN = [
    ("StatefulSet", "apps/v1"),
    ("Job", "batch/v1"),
    ("ReplicaSet", "apps/v1"),
    ("DaemonSet", "apps/v1"),
]


def _owner(kind: str, api_version: str, name: str, app: str) -> Obj:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{kind}-{name}", "resourceVersion": "1"},
        "spec": {"selector": {"matchLabels": {"app": app}}, "minReadySeconds": 0},
    }


def _pod(rnd: random.Random, rv: int, kind: str, api_version: str) -> Obj:
    refs = []
    roll = rnd.random()
    if roll < 0.4:
        k, v = rnd.choice(FOREIGN)
        refs.append({"apiVersion": v, "kind": k, "name": "o1", "uid": f"uid-{k}-o1", "controller": True})
    elif roll < 0.8:
        name = rnd.choice(["o1", "o2"])
        uid = f"uid-{kind}-{name}" if rnd.random() < 0.8 else "stale"
        refs.append({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": True})
    md: dict[str, Any] = {
        "name": "p",
        "namespace": "ns",
        "uid": "pod-uid",
        "resourceVersion": str(rv),
        "labels": {"app": rnd.choice(["a", "b"])},
        "ownerReferences": refs,
    }
    if rnd.random() < 0.1:
        md["deletionTimestamp"] = "2027-01-01T00:00:00Z"
    return {"metadata": md, "status": {"phase": "Running"}}


class Unfiltered:
    """The same controller with no kind to filter on: every update takes the general path."""

    @staticmethod
    def make(cls: type[PodOwnerController]) -> PodOwnerController:
        sub: type[PodOwnerController] = type(
            f"Unfiltered{cls.__name__}", (cls,), {"_owner_kind": lambda self: ""}
        )
        return sub(None)  # type: ignore[arg-type]  # never started: no API


def _record(ctrl: PodOwnerController, log: list[tuple[Any, ...]]) -> None:
    ctrl.enqueue = lambda key: log.append(("enqueue", key))  # type: ignore[method-assign]
    ctrl.enqueue_after = lambda key, delay: log.append(("after", key, delay))  # type: ignore[method-assign]


@pytest.mark.parametrize("name", sorted(CONTROLLERS))
@pytest.mark.parametrize("seed", range(4))
def test_a_foreign_pod_update_queues_what_the_general_path_queues(name: str, seed: int) -> None:
    cls, kind, api_version = CONTROLLERS[name]
    rnd = random.Random(seed)
    fast = cls(None)  # type: ignore[arg-type]  # never started: informers fed directly
    general = Unfiltered.make(cls)
    got: list[tuple[Any, ...]] = []
    want: list[tuple[Any, ...]] = []
    _record(fast, got)
    _record(general, want)
    for ctrl in (fast, general):
        for owner, app in (("o1", "a"), ("o2", "b")):
            ctrl.sets._upsert(_owner(kind, api_version, owner, app))
    skipped = 0
    rv = 1
    old = _pod(rnd, rv, kind, api_version)
    for _ in range(400):
        rv += 1
        cur = (
            _pod(rnd, rv, kind, api_version)
            if rnd.random() < 0.5
            else {**old, "metadata": {**old["metadata"], "resourceVersion": str(rv)}}
        )
        if rnd.random() < 0.2:  # a deletion of the pod expected by both owners
            for ctrl in (fast, general):
                for owner in ("o1", "o2"):
                    ctrl.expectations.expect_deletions(f"ns/{owner}", ["ns/p"])
        before = len(want)
        fast._update_pod(old, cur)
        general._update_pod(old, cur)
        assert got == want
        for owner in ("o1", "o2"):
            assert fast.expectations.pending(f"ns/{owner}") == general.expectations.pending(f"ns/{owner}")
        skipped += len(want) == before
        old = cur
    assert len(want) > 50 and skipped > 50  # both outcomes were exercised
