"""StatefulSet controller behaviour through the in-process client (only this controller runs)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import CONTROLLERREVISIONS, EVENTS, NAMESPACES, PODS, STATEFULSETS
from controllers.manager import STATEFULSET, register_controllers
from controllers.statefulset import SchedulingPlan, StatefulSetController
from controllers.statefulset import utils as su
from controllers.testing import PodReadier, observed, set_pod_status, statefulset, wait_object
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list

pytestmark = pytest.mark.anyio


@pytest.fixture
async def ctrl(cp: ControlPlane) -> AsyncIterator[StatefulSetController]:
    register_controllers(cp, "statefulset")
    c = await cp.start_component(STATEFULSET)
    assert isinstance(c, StatefulSetController)
    yield c


def names(pods: list[Obj]) -> list[str]:
    return sorted((p["metadata"]["name"] for p in pods), key=lambda n: int(n.rsplit("-", 1)[1]))


async def pods_of(client: Any, app: str = "web", n: int | None = None, ns: str = "default") -> list[Obj]:
    return await wait_for_list(
        client,
        PODS,
        ns,
        (lambda items: len(items) == n) if n is not None else (lambda items: True),
        label_selector=f"app={app}",
    )


async def events(ctrl: StatefulSetController, client: Any, ns: str = "default") -> list[tuple[str, str, str]]:
    await ctrl.recorder.flush()
    lst = await client.list(EVENTS, ns)
    return [(e["type"], e["reason"], e["message"]) for e in lst["items"]]


async def test_creates_pods_with_stable_identity_and_reports_status(
    client: Any, ctrl: StatefulSetController
) -> None:
    sts = await client.create(STATEFULSETS, statefulset("web", 2, policy="Parallel"), "default")
    pods = await pods_of(client, n=2)
    assert names(pods) == ["web-0", "web-1"]
    p0 = next(p for p in pods if p["metadata"]["name"] == "web-0")
    rev = p0["metadata"]["labels"][su.REVISION_LABEL]
    assert rev.startswith("web-")
    assert p0["metadata"]["labels"][su.POD_NAME_LABEL] == "web-0"
    assert p0["metadata"]["labels"][su.POD_INDEX_LABEL] == "0"
    assert p0["spec"]["hostname"] == "web-0" and p0["spec"]["subdomain"] == "web"
    assert p0["metadata"]["ownerReferences"][0]["uid"] == sts["metadata"]["uid"]
    got = await wait_object(
        client,
        STATEFULSETS,
        "web",
        "default",
        lambda o: o is not None and (o.get("status") or {}).get("replicas") == 2,
    )
    assert got is not None
    assert got["status"]["observedGeneration"] == 1
    assert got["status"]["currentRevision"] == got["status"]["updateRevision"] == rev
    assert got["status"]["collisionCount"] == 0
    revs = (await client.list(CONTROLLERREVISIONS, "default"))["items"]
    assert [r["metadata"]["name"] for r in revs] == [rev]
    assert revs[0]["data"]["spec"]["template"]["$patch"] == "replace"
    assert revs[0]["metadata"]["labels"]["controller.kubernetes.io/hash"] == rev.removeprefix("web-")
    assert ("Normal", "SuccessfulCreate", "create Pod web-0 in StatefulSet web successful") in await events(
        ctrl, client
    )


async def test_status_counts_ready_and_available_pods(client: Any, ctrl: StatefulSetController) -> None:
    await client.create(STATEFULSETS, statefulset("web", 2, policy="Parallel", minReadySeconds=60), "default")
    await pods_of(client, n=2)
    old = ctrl.clock.now() - 3600
    await set_pod_status(client, "web-0", at=old)
    await set_pod_status(client, "web-1")  # Ready just now: not yet available
    got = await wait_object(
        client,
        STATEFULSETS,
        "web",
        "default",
        lambda o: (o or {}).get("status", {}).get("readyReplicas") == 2,
    )
    assert got is not None
    assert got["status"]["availableReplicas"] == 1


async def test_orphans_matching_the_selector_are_adopted_and_mismatches_released(
    client: Any, ctrl: StatefulSetController
) -> None:
    orphan = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "main", "image": "img"}]},
    }
    created = await client.create(PODS, orphan, "default")
    # OnDelete: the adopted pod (no revision label) is not rolled away under the test.
    sts = await client.create(
        STATEFULSETS, statefulset("web", 1, policy="Parallel", updateStrategy={"type": "OnDelete"}), "default"
    )
    adopted = await wait_object(
        client, PODS, "web-0", "default", lambda o: bool(o and (o["metadata"].get("ownerReferences") or []))
    )
    assert adopted is not None
    assert adopted["metadata"]["uid"] == created["metadata"]["uid"]
    assert adopted["metadata"]["ownerReferences"][0]["uid"] == sts["metadata"]["uid"]
    # identity labels are fixed on the adopted pod
    fixed = await wait_object(
        client,
        PODS,
        "web-0",
        "default",
        lambda o: (o or {}).get("metadata", {}).get("labels", {}).get(su.POD_NAME_LABEL) == "web-0",
    )
    assert fixed is not None
    # An owned pod whose labels stop matching is released.
    await client.patch(PODS, "web-0", {"metadata": {"labels": {"app": "other"}}}, "default")
    released = await wait_object(
        client, PODS, "web-0", "default", lambda o: o is not None and not o["metadata"].get("ownerReferences")
    )
    assert released is not None and released["metadata"]["uid"] == created["metadata"]["uid"]


async def test_a_controlled_pod_that_is_not_a_member_is_released(
    client: Any, ctrl: StatefulSetController
) -> None:
    """``isMemberOf`` fails for a pod not named ``<set>-<ordinal>``: the set lets it go."""
    sts = await client.create(STATEFULSETS, statefulset("web", 1, policy="Parallel"), "default")
    await pods_of(client, n=1)
    stray = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "stray",
            "labels": {"app": "web"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": "web",
                    "uid": sts["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "main", "image": "img"}]},
    }
    await client.create(PODS, stray, "default")
    released = await wait_object(
        client, PODS, "stray", "default", lambda o: o is not None and not o["metadata"].get("ownerReferences")
    )
    assert released is not None


def _revision(name: str, app: str, namespace: str = "default") -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": app}},
        "data": {"spec": {"template": {"$patch": "replace"}}},
        "revision": 1,
    }


async def test_orphan_revisions_matching_the_selector_are_adopted(
    client: Any, ctrl: StatefulSetController
) -> None:
    """``adoptOrphanRevisions``: only orphans of the set's namespace that its selector matches."""
    await client.create(NAMESPACES, {"metadata": {"name": "other"}})
    await client.create(CONTROLLERREVISIONS, _revision("web-old", "web"), "default")
    await client.create(CONTROLLERREVISIONS, _revision("db-old", "db"), "default")
    await client.create(CONTROLLERREVISIONS, _revision("web-elsewhere", "web", "other"), "other")
    sts = await client.create(STATEFULSETS, statefulset("web", 1, policy="Parallel"), "default")
    adopted = await wait_object(
        client,
        CONTROLLERREVISIONS,
        "web-old",
        "default",
        lambda o: bool(o and (o["metadata"].get("ownerReferences") or [])),
    )
    assert adopted is not None
    (ref,) = adopted["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["uid"], ref["controller"]) == ("StatefulSet", sts["metadata"]["uid"], True)
    await wait_object(
        client, STATEFULSETS, "web", "default", lambda o: (o or {}).get("status", {}).get("replicas") == 1
    )
    for name, ns in (("db-old", "default"), ("web-elsewhere", "other")):
        untouched = await client.get(CONTROLLERREVISIONS, name, ns)
        assert not untouched["metadata"].get("ownerReferences")


async def test_a_revision_name_taken_by_other_data_bumps_the_collision_count(
    cp: ControlPlane, client: Any
) -> None:
    """``CreateControllerRevision``: AlreadyExists with different data -> next collision count, new name."""
    from controllers import history

    sts = await client.create(STATEFULSETS, statefulset("web", 1, policy="Parallel"), "default")
    taken = history.revision_name("web", history.hash_revision(su.revision_data(sts), 0))
    squatter = _revision(taken, "other")
    await client.create(CONTROLLERREVISIONS, squatter, "default")
    register_controllers(cp, "statefulset")
    await cp.start_component(STATEFULSET)
    got = await wait_object(
        client, STATEFULSETS, "web", "default", lambda o: (o or {}).get("status", {}).get("replicas") == 1
    )
    assert got is not None
    assert got["status"]["collisionCount"] == 1
    assert got["status"]["updateRevision"] == history.revision_name(
        "web", history.hash_revision(su.revision_data(sts), 1)
    )
    (pod,) = await pods_of(client, n=1)
    assert pod["metadata"]["labels"][su.REVISION_LABEL] == got["status"]["updateRevision"] != taken


async def test_failed_pod_is_recreated(client: Any, ctrl: StatefulSetController) -> None:
    await client.create(STATEFULSETS, statefulset("web", 1), "default")
    first = (await pods_of(client, n=1))[0]
    await set_pod_status(client, "web-0", phase="Failed", ready=False)
    again = await wait_object(
        client,
        PODS,
        "web-0",
        "default",
        lambda o: o is not None and o["metadata"]["uid"] != first["metadata"]["uid"],
    )
    assert again is not None
    evs = await events(ctrl, client)
    assert ("Warning", "RecreatingFailedPod", "StatefulSet default/web is recreating failed Pod web-0") in evs
    assert ("Normal", "SuccessfulDelete", "delete Pod web-0 in StatefulSet web successful") in evs


async def test_on_delete_waits_for_the_user_to_delete_pods(client: Any, ctrl: StatefulSetController) -> None:
    await client.create(
        STATEFULSETS, statefulset("web", 2, policy="Parallel", updateStrategy={"type": "OnDelete"}), "default"
    )
    async with PodReadier(client):
        pods = await pods_of(client, n=2)
        old_rev = pods[0]["metadata"]["labels"][su.REVISION_LABEL]
        await client.patch(
            STATEFULSETS,
            "web",
            {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "v2"}]}}}},
            "default",
        )
        got = await wait_object(
            client,
            STATEFULSETS,
            "web",
            "default",
            lambda o: (o or {}).get("status", {}).get("updateRevision", old_rev) != old_rev,
        )
        assert got is not None
        new_rev = got["status"]["updateRevision"]
        await observed(
            ctrl.sets, "default/web", lambda o: (o or {}).get("status", {}).get("updateRevision") == new_rev
        )
        await ctrl.wait_idle()
        still = await pods_of(client, n=2)
        assert {p["metadata"]["labels"][su.REVISION_LABEL] for p in still} == {old_rev}
        await client.delete(PODS, "web-1", "default")
        replaced = await wait_object(
            client,
            PODS,
            "web-1",
            "default",
            lambda o: (o or {}).get("metadata", {}).get("labels", {}).get(su.REVISION_LABEL) == new_rev,
        )
        assert replaced is not None and replaced["spec"]["containers"][0]["image"] == "v2"


async def test_rollback_renumbers_the_old_revision_and_history_is_trimmed(
    client: Any, ctrl: StatefulSetController
) -> None:
    await client.create(
        STATEFULSETS,
        statefulset("web", 1, policy="Parallel", updateStrategy={"type": "OnDelete"}, revisionHistoryLimit=1),
        "default",
    )

    async def observed_revision() -> str:
        got = await wait_object(
            client,
            STATEFULSETS,
            "web",
            "default",
            lambda o: (
                o is not None
                and (o.get("status") or {}).get("observedGeneration") == o["metadata"]["generation"]
            ),
        )
        assert got is not None
        return str(got["status"]["updateRevision"])

    async def set_image(image: str) -> str:
        patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}}
        await client.patch(STATEFULSETS, "web", patch, "default")
        return await observed_revision()

    r0 = await observed_revision()  # the pod stays at r0: OnDelete never replaces it
    r1 = await set_image("v1")
    r2 = await set_image("v2")
    r3 = await set_image("v3")
    assert await set_image("v1") == r1, "going back reuses the equal revision"
    # live: r0 (current, and the pod's) and r1 (update); of the rest, revisionHistoryLimit=1 keeps
    # the newest (r3) and deletes r2
    revs = await wait_for_list(client, CONTROLLERREVISIONS, "default", lambda items: len(items) == 3)
    numbers = {r["metadata"]["name"]: r["revision"] for r in revs}
    assert numbers == {r0: 1, r3: 4, r1: 5}
    assert r2 not in numbers


class SpyHook:
    """A scheduling hook that wants only StatefulSets carrying ``spec.scheduling``."""

    def __init__(self, plan: SchedulingPlan) -> None:
        self.plan = plan
        self.prepared: list[str] = []
        self.attached = False

    def attach(self, controller: StatefulSetController) -> None:
        self.attached = True

    def wants(self, sts: Obj) -> bool:
        return "scheduling" in (sts.get("spec") or {})

    async def prepare(self, sts: Obj, pods: list[Obj]) -> SchedulingPlan:
        self.prepared.append(sts["metadata"]["name"])
        return self.plan


def _annotate(pod: Obj) -> None:
    pod["metadata"].setdefault("annotations", {})["example.com/pod-group"] = "pg"


async def test_scheduling_hook_is_consulted_only_for_sets_that_want_it(cp: ControlPlane, client: Any) -> None:
    hook = SpyHook(SchedulingPlan(decorate_pod=_annotate))
    ctrl = StatefulSetController(cp.client("statefulset-controller"), clock=cp.clock, scheduling_hook=hook)
    await ctrl.start()
    try:
        assert hook.attached
        await client.create(STATEFULSETS, statefulset("plain", 1, policy="Parallel"), "default")
        plain = await pods_of(client, "plain", n=1)
        assert "annotations" not in plain[0]["metadata"]
        await client.create(STATEFULSETS, statefulset("gang", 2, policy="Parallel", scheduling={}), "default")
        gang = await pods_of(client, "gang", n=2)
        assert all(p["metadata"]["annotations"]["example.com/pod-group"] == "pg" for p in gang)
        assert set(hook.prepared) == {"gang"}
    finally:
        await ctrl.stop()


async def test_a_plan_that_does_not_proceed_holds_pod_creation(cp: ControlPlane, client: Any) -> None:
    hook = SpyHook(SchedulingPlan(proceed=False, reason="minCount update pending"))
    ctrl = StatefulSetController(cp.client("statefulset-controller"), clock=cp.clock, scheduling_hook=hook)
    await ctrl.start()
    try:
        await client.create(STATEFULSETS, statefulset("gang", 2, policy="Parallel", scheduling={}), "default")
        got = await wait_object(
            client,
            STATEFULSETS,
            "gang",
            "default",
            lambda o: bool((o or {}).get("status", {}).get("updateRevision")),
        )
        assert got is not None and got["status"]["replicas"] == 0
        await ctrl.wait_idle()
        assert (await client.list(PODS, "default", label_selector="app=gang"))["items"] == []
    finally:
        await ctrl.stop()
