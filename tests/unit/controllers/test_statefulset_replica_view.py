"""The StatefulSet sync's kept view of its replicas (:mod:`controllers.statefulset.replicaview`)
decides and writes exactly what the full walk over the pods does.

Differential: two :class:`StatefulSetControl` — one placing every pod on every sync, one patching
its :class:`ReplicaView` — are given the same random sequences of pod versions (phase, readiness,
deletion, revision, pods removed, condemned and misnamed pods, two pods for one ordinal, shuffled
lists, the pods each step created) and spec changes (replicas, start ordinal, policy, partition,
maxUnavailable, minReadySeconds); every sync's status, status write, pod call and Event must be
the same.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.meta import FakeClock
from controllers.statefulset import utils
from controllers.statefulset.control import StatefulSetControl
from controllers.statefulset.hooks import PROCEED
from controllers.statefulset.podfacts import PodFactsCache, pod_facts
from controllers.statefulset.replicaview import ReplicaView, ViewKey
from controllers.testing import statefulset

pytestmark = pytest.mark.anyio

NS = "default"


class Log:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []


class FakeClient:
    """What the control reaches of the API in these syncs: the status write."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self.rv = 100

    async def update_status(self, gvr: Any, body: Obj, namespace: str, **_: Any) -> Obj:
        self.rv += 1
        self.log.calls.append(("status", copy.deepcopy(body["status"])))
        out = copy.deepcopy(body)
        out["metadata"]["resourceVersion"] = str(self.rv)
        return out


class SpyPods:
    """A :class:`StatefulPodControl` that records its calls; a created pod gets a uid."""

    def __init__(self, log: Log) -> None:
        self.log = log

    async def create_pod(
        self, sts: Obj, pod: Obj, decorate: Any = None, claims: bool = True, handoff: bool = False
    ) -> Obj:
        labels = pod["metadata"]["labels"]
        self.log.calls.append(("create", pod["metadata"]["name"], labels.get(utils.REVISION_LABEL), handoff))
        out = copy.deepcopy(pod)
        out["metadata"].update(uid=f"uid-{pod['metadata']['name']}-new", resourceVersion="1")
        return out

    async def delete_pod(self, sts: Obj, pod: Obj) -> None:
        self.log.calls.append(("delete", pod["metadata"]["name"]))

    async def update_pod(self, sts: Obj, pod: Obj) -> None:
        self.log.calls.append(("update", pod["metadata"]["name"]))

    async def create_missing_claims(self, sts: Obj, pod: Obj) -> None:
        return None

    def claims_match_retention(self, sts: Obj, pod: Obj) -> bool:
        return True

    def claims_in_place(self, sts: Obj, pod: Obj) -> bool:
        return True

    def pod_claim_is_stale(self, sts: Obj, pod: Obj) -> bool:
        return False

    async def update_claims_for_retention(self, sts: Obj, pod: Obj) -> None:
        self.log.calls.append(("retention", pod["metadata"]["name"]))


class SpyRecorder:
    def __init__(self, log: Log) -> None:
        self.log = log

    def event(self, obj: Obj, etype: str, reason: str, message: str, related: Obj | None = None) -> None:
        self.log.calls.append(("event", etype, reason, message))


def _control(incremental: bool, clock: FakeClock) -> tuple[StatefulSetControl, Log]:
    log = Log()
    ctl = StatefulSetControl(FakeClient(log), SpyPods(log), SpyRecorder(log), clock, incremental)  # type: ignore[arg-type]
    return ctl, log


class World:
    """The informer's view: immutable pod versions (a change is a new object) and the set."""

    def __init__(self, rnd: random.Random, ctl: StatefulSetControl) -> None:
        self.rnd = rnd
        self.sts = statefulset("web", 8, policy="Parallel")
        self.sts["metadata"].update(uid="set-uid", generation=1, resourceVersion="10")
        old_sts = copy.deepcopy(self.sts)
        old_sts["spec"]["template"]["spec"]["containers"][0]["image"] = "old:1"
        self.old = ctl._new_revision(old_sts, 1, 0)
        self.new = ctl._new_revision(self.sts, 2, 0)
        for r in (self.old, self.new):
            r["metadata"].update(uid=f"rev-{r['metadata']['name']}", resourceVersion="5")
        self.sts["status"] = {"currentRevision": self.old["metadata"]["name"]}
        self.pods: dict[str, Obj] = {}
        self.serial = 0
        for o in range(8):
            self.put(self.pod(o, self.rnd.choice(self.revisions()), "Running", ready=True))

    def revisions(self) -> list[str]:
        return [self.old["metadata"]["name"], self.new["metadata"]["name"]]

    def pod(self, ordinal: int, revision: str, phase: str, ready: bool, name: str | None = None) -> Obj:
        self.serial += 1
        name = name or f"web-{ordinal}"
        pod: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": NS,
                "uid": f"uid-{name}-{self.serial}",
                "resourceVersion": str(self.serial),
                "labels": {"app": "web", utils.REVISION_LABEL: revision, utils.POD_NAME_LABEL: name},
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "StatefulSet",
                        "name": "web",
                        "uid": "set-uid",
                        "controller": True,
                    }
                ],
            },
            "spec": {"containers": [{"name": "main", "image": "x"}]},
            "status": {"phase": phase},
        }
        self._ready(pod, ready)
        return pod

    @staticmethod
    def _ready(pod: Obj, ready: bool) -> None:
        pod["status"]["conditions"] = [
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ]

    def put(self, pod: Obj) -> None:
        self.pods[pod["metadata"]["name"]] = pod

    def changed(self, pod: Obj) -> Obj:
        new = copy.deepcopy(pod)
        self.serial += 1
        new["metadata"]["resourceVersion"] = str(self.serial)
        return new

    def mutate(self) -> None:
        rnd = self.rnd
        for _ in range(rnd.randint(1, 4)):
            op = rnd.random()
            names = sorted(self.pods)
            if op < 0.45 and names:
                pod = self.changed(self.pods[rnd.choice(names)])
                pod["status"]["phase"] = rnd.choice(["Running", "Running", "Pending", "Failed", "Succeeded"])
                self._ready(pod, rnd.random() < 0.7)
                self.put(pod)
            elif op < 0.55 and names:
                pod = self.changed(self.pods[rnd.choice(names)])
                pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
                self.put(pod)
            elif op < 0.65 and names:
                pod = self.changed(self.pods[rnd.choice(names)])
                pod["metadata"]["labels"][utils.REVISION_LABEL] = rnd.choice(self.revisions())
                self.put(pod)
            elif op < 0.75 and names:
                del self.pods[rnd.choice(names)]
            elif op < 0.82:
                start = utils.start_ordinal(self.sts)
                o = rnd.choice([start + utils.replicas_of(self.sts) + rnd.randint(0, 3), max(0, start - 1)])
                self.put(self.pod(o, rnd.choice(self.revisions()), "Running", rnd.random() < 0.5))
            elif op < 0.85:
                # a misnamed member, or a second pod for an ordinal (``web-01`` is ordinal 1)
                if rnd.random() < 0.5 and names:
                    pod = self.changed(self.pods[rnd.choice(names)])
                    pod["metadata"]["labels"][utils.POD_NAME_LABEL] = "other"
                    self.put(pod)
                else:
                    self.put(self.pod(1, self.revisions()[1], "Running", True, name="web-01"))
            elif op < 0.95:
                self.respec()
            elif "web-01" in self.pods or self.sts["spec"].get("minReadySeconds"):
                # leave the cases the view hands to the full walk (a second pod for an
                # ordinal, minReadySeconds) so that the view is compared again
                self.pods.pop("web-01", None)
                self.sts["spec"]["minReadySeconds"] = 0
                self.sts["metadata"]["generation"] += 1
        self.sts = copy.deepcopy(self.sts)

    def respec(self) -> None:
        rnd = self.rnd
        spec = self.sts["spec"]
        what = rnd.choice(
            ["replicas", "start", "policy", "partition", "maxUnavailable", "minReady", "strategy"]
        )
        if what == "replicas":
            spec["replicas"] = rnd.randint(0, 11)
        elif what == "start":
            spec["ordinals"] = {"start": rnd.choice([0, 0, 1, 2])}
        elif what == "policy":
            spec["podManagementPolicy"] = rnd.choice(["Parallel", "OrderedReady"])
        elif what == "partition":
            spec.setdefault("updateStrategy", {"type": "RollingUpdate"}).setdefault("rollingUpdate", {})[
                "partition"
            ] = rnd.randint(0, 5)
        elif what == "maxUnavailable":
            spec.setdefault("updateStrategy", {"type": "RollingUpdate"}).setdefault("rollingUpdate", {})[
                "maxUnavailable"
            ] = rnd.choice([1, 2, 3, "50%"])
        elif what == "minReady":
            spec["minReadySeconds"] = rnd.choice([0, 0, 5])
        else:
            spec["updateStrategy"] = {"type": rnd.choice(["RollingUpdate", "OnDelete"])}
        self.sts["metadata"]["generation"] += 1

    def listing(self) -> list[Obj]:
        pods = list(self.pods.values())
        r = self.rnd.random()
        if r < 0.2:
            self.rnd.shuffle(pods)
        elif r < 0.4 and len(pods) > 1:
            i, j = self.rnd.sample(range(len(pods)), 2)  # a few positions change: patched in place
            pods[i], pods[j] = pods[j], pods[i]
        return pods


@pytest.mark.parametrize("seed", range(40))
async def test_the_kept_view_syncs_exactly_as_the_full_walk(seed: int) -> None:
    clock = FakeClock(1_767_225_600.0 - 3)  # Ready pods turn available (minReadySeconds 5) as it steps
    full, full_log = _control(False, clock)
    kept, kept_log = _control(True, clock)
    world = World(random.Random(seed), full)
    revisions = [world.old, world.new]
    cache = PodFactsCache()
    viewed = 0
    for step in range(60):
        pods = world.listing()
        sts = world.sts
        a = await full.update(copy.deepcopy(sts), list(pods), list(revisions), PROCEED, pod_facts)
        facts = cache.begin("default/web", "set-uid", _selector())
        try:
            b = await kept.update(copy.deepcopy(sts), list(pods), list(revisions), PROCEED, facts)
        finally:
            facts.end()
        assert a == b, f"step {step}"
        assert full_log.calls == kept_log.calls, f"step {step}"
        view = kept.views._views.get("default/web")
        if view is not None:
            viewed += 1
            _assert_as_if_built_afresh(view)
        # the informer then delivers the created pods and the written status
        for call in full_log.calls:
            if call[0] == "create":
                o = utils.parent_and_ordinal(call[1])[1]
                world.put(world.pod(o, call[2], "Pending", False))
        if full_log.calls and full_log.calls[-1][0] == "status":
            world.sts = copy.deepcopy(world.sts)
            world.sts["status"] = full_log.calls[-1][1]
        full_log.calls.clear()
        kept_log.calls.clear()
        clock.step(1.0)
        world.mutate()
    assert viewed >= 20, "the kept view was hardly used: the test compares nothing"


def _assert_as_if_built_afresh(view: ReplicaView) -> None:
    """What a view patched sync after sync holds is what one built from its pods at once holds."""
    fresh = ReplicaView(view.key)
    assert fresh.refresh([p for p, _ in view.placed.values()], pod_facts)
    assert [id(p) for p in view.slots] == [id(p) for p in fresh.slots]
    assert view.rfacts == fresh.rfacts
    assert (view.missing, view.unhealthy, view.unsettled) == (fresh.missing, fresh.unhealthy, fresh.unsettled)
    assert view.condemned.keys() == fresh.condemned.keys()
    assert view.counts() == fresh.counts()
    assert view.budget_sums(()) == fresh.budget_sums(())


def _selector() -> Any:
    from apiserver.selectors import label_selector_from_dict

    return label_selector_from_dict({"matchLabels": {"app": "web"}})


def test_two_pods_for_one_ordinal_are_left_to_the_full_walk() -> None:
    key = ViewKey("u", "web", NS, 0, 3, "r1", "r1")
    pods = [
        {"metadata": {"name": n, "namespace": NS, "uid": n, "labels": {utils.POD_NAME_LABEL: n}}}
        for n in ("web-1", "web-01")
    ]
    assert ReplicaView(key).refresh(pods, pod_facts) is False
    assert ReplicaView(key).refresh([pods[0], pods[0]], pod_facts) is False
    view = ReplicaView(key)
    assert view.refresh(pods[:1], pod_facts) is True
    assert view.missing == {0, 2} and view.slots[1] is pods[0]
    assert view.refresh([], pod_facts) is True
    assert view.missing == {0, 1, 2} and not view.placed and view.counts() == (0, 0, 0, 0)


def test_a_view_whose_refresh_failed_is_not_kept() -> None:
    from controllers.statefulset.replicaview import ReplicaViews

    key = ViewKey("u", "web", NS, 0, 2, "r1", "r1")
    pods = [
        {"metadata": {"name": n, "namespace": NS, "uid": n, "labels": {utils.POD_NAME_LABEL: n}}}
        for n in ("web-0", "web-1")
    ]
    views = ReplicaViews()
    assert views.get("default/web", key, pods, pod_facts) is not None
    changed = [copy.deepcopy(pods[0]), pods[1]]

    def failing(pod: Obj) -> Any:
        raise ValueError("unreadable pod")

    with pytest.raises(ValueError):
        views.get("default/web", key, changed, failing)
    view = views.get("default/web", key, changed, pod_facts)
    assert view is not None and view.slots[0] is changed[0] and view.missing == set()
