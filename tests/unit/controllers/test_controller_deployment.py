"""Deployment controller behaviour (with the ReplicaSet controller and a fake kubelet), in-process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import DEPLOYMENTS, EVENTS, PODS, REPLICASETS
from controllers.deployment import DeploymentController
from controllers.deployment import util as du
from controllers.manager import DEPLOYMENT, REPLICASET, register_controllers
from controllers.testing import PodReadier, wait_object
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list

pytestmark = pytest.mark.anyio


def deployment(name: str = "web", replicas: int = 3, image: str = "nginx:1", **spec: Any) -> Obj:
    body: Obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
        },
    }
    body["spec"].update(spec)
    return body


@pytest.fixture
async def ctrl(cp: ControlPlane) -> AsyncIterator[DeploymentController]:
    register_controllers(cp, "deployment,replicaset")
    await cp.start_component(REPLICASET)
    c = await cp.start_component(DEPLOYMENT)
    assert isinstance(c, DeploymentController)
    yield c


def cond(obj: Obj | None, ctype: str) -> Obj:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c["type"] == ctype:
            return c
    return {}


def rolled_out(o: Obj | None) -> bool:
    if o is None:
        return False
    st = o.get("status") or {}
    want = o["spec"]["replicas"]
    return (
        st.get("observedGeneration", 0) >= o["metadata"]["generation"]
        and st.get("updatedReplicas") == want
        and st.get("availableReplicas") == want
        and st.get("replicas") == want
        and cond(o, "Progressing").get("reason") == "NewReplicaSetAvailable"
    )


async def wait_rolled_out(client: Any, name: str = "web", timeout: float = 20.0) -> Obj:
    got = await wait_object(client, DEPLOYMENTS, name, "default", rolled_out, timeout=timeout)
    assert got is not None
    return got


async def replicasets(client: Any) -> list[Obj]:
    return sorted((await client.list(REPLICASETS, "default"))["items"], key=du.revision_of)


async def events(ctrl: DeploymentController, client: Any) -> list[tuple[str, str, str]]:
    await ctrl.recorder.flush()
    return [(e["type"], e["reason"], e["message"]) for e in (await client.list(EVENTS, "default"))["items"]]


async def test_creates_a_replicaset_with_pod_template_hash_and_revision_1(
    client: Any, ctrl: DeploymentController
) -> None:
    async with PodReadier(client):
        d = await client.create(DEPLOYMENTS, deployment(), "default")
        got = await wait_rolled_out(client)
    (rs,) = await replicasets(client)
    h = rs["metadata"]["labels"][du.POD_TEMPLATE_HASH]
    assert rs["metadata"]["name"] == f"web-{h}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", du.POD_TEMPLATE_HASH: h}
    assert rs["spec"]["template"]["metadata"]["labels"][du.POD_TEMPLATE_HASH] == h
    assert rs["metadata"]["annotations"][du.REVISION] == "1"
    assert rs["metadata"]["annotations"][du.DESIRED_REPLICAS] == "3"
    assert rs["metadata"]["annotations"][du.MAX_REPLICAS] == "4"
    assert rs["metadata"]["ownerReferences"][0]["uid"] == d["metadata"]["uid"]
    assert got["metadata"]["annotations"][du.REVISION] == "1"
    assert cond(got, "Available") == {
        **cond(got, "Available"),
        "status": "True",
        "reason": "MinimumReplicasAvailable",
        "message": "Deployment has minimum availability.",
    }
    prog = cond(got, "Progressing")
    assert prog["status"] == "True"
    assert prog["message"] == f'ReplicaSet "{rs["metadata"]["name"]}" has successfully progressed.'
    assert got["status"]["unavailableReplicas"] == 0 if "unavailableReplicas" in got["status"] else True
    pods = (await client.list(PODS, "default", label_selector=f"{du.POD_TEMPLATE_HASH}={h}"))["items"]
    assert len(pods) == 3
    assert (
        "Normal",
        "ScalingReplicaSet",
        f"Scaled up replica set {rs['metadata']['name']} from 0 to 3",
    ) in await events(ctrl, client)


async def test_rolling_update_respects_max_surge_and_max_unavailable(
    client: Any, ctrl: DeploymentController
) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    async with PodReadier(client):
        await client.create(DEPLOYMENTS, deployment(replicas=4, strategy=strategy), "default")
        await wait_rolled_out(client)
        lst = await client.list(REPLICASETS, "default")
        worst: dict[str, int] = {"total": 0}
        sizes: dict[str, int] = {r["metadata"]["name"]: r["spec"]["replicas"] for r in lst["items"]}

        async def watch() -> None:
            async for ev in client.watch(
                REPLICASETS, "default", resource_version=lst["metadata"]["resourceVersion"]
            ):
                sizes[ev.object["metadata"]["name"]] = (
                    0 if ev.type == "DELETED" else ev.object["spec"]["replicas"]
                )
                worst["total"] = max(worst["total"], sum(sizes.values()))

        task = asyncio.create_task(watch())
        await client.patch(
            DEPLOYMENTS,
            "web",
            {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:2"}]}}}},
            "default",
            patch_type="application/strategic-merge-patch+json",
        )
        got = await wait_rolled_out(client)
        task.cancel()
    assert worst["total"] == 5  # replicas + maxSurge, never more
    old, new = await replicasets(client)
    assert old["spec"]["replicas"] == 0 and new["spec"]["replicas"] == 4
    assert du.revision_of(new) == 2 and got["metadata"]["annotations"][du.REVISION] == "2"
    evs = await events(ctrl, client)
    assert (
        "Normal",
        "ScalingReplicaSet",
        f"Scaled down replica set {old['metadata']['name']} from 4 to 3",
    ) in evs
    assert (
        "Normal",
        "ScalingReplicaSet",
        f"Scaled up replica set {new['metadata']['name']} from 0 to 1",
    ) in evs


async def test_rollback_to_an_old_template_reuses_its_replicaset_and_records_revision_history(
    client: Any, ctrl: DeploymentController
) -> None:
    async with PodReadier(client):
        await client.create(DEPLOYMENTS, deployment(replicas=2), "default")
        await wait_rolled_out(client)
        image = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:2"}]}}}}
        await client.patch(
            DEPLOYMENTS, "web", image, "default", patch_type="application/strategic-merge-patch+json"
        )
        await wait_rolled_out(client)
        image["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1"
        await client.patch(
            DEPLOYMENTS, "web", image, "default", patch_type="application/strategic-merge-patch+json"
        )
        got = await wait_rolled_out(client)
    rs = await replicasets(client)
    assert len(rs) == 2
    second, first = rs
    assert du.revision_of(first) == 3
    assert first["metadata"]["annotations"][du.REVISION_HISTORY] == "1"
    assert first["spec"]["replicas"] == 2 and second["spec"]["replicas"] == 0
    assert got["metadata"]["annotations"][du.REVISION] == "3"


async def test_recreate_scales_old_pods_to_zero_before_creating_new_ones(
    client: Any, ctrl: DeploymentController
) -> None:
    async with PodReadier(client):
        await client.create(DEPLOYMENTS, deployment(replicas=2, strategy={"type": "Recreate"}), "default")
        await wait_rolled_out(client)
        (old,) = await replicasets(client)
        lst = await client.list(PODS, "default")
        seen_overlap = {"v": False}
        live: dict[str, str] = {
            p["metadata"]["name"]: p["metadata"]["labels"][du.POD_TEMPLATE_HASH] for p in lst["items"]
        }

        async def watch() -> None:
            async for ev in client.watch(
                PODS, "default", resource_version=lst["metadata"]["resourceVersion"]
            ):
                if ev.type == "DELETED":
                    live.pop(ev.object["metadata"]["name"], None)
                else:
                    live[ev.object["metadata"]["name"]] = ev.object["metadata"]["labels"][
                        du.POD_TEMPLATE_HASH
                    ]
                if len(set(live.values())) > 1:
                    seen_overlap["v"] = True

        task = asyncio.create_task(watch())
        patch = {"spec": {"template": {"metadata": {"labels": {"app": "web", "v": "2"}}}}}
        await client.patch(DEPLOYMENTS, "web", patch, "default")
        await wait_rolled_out(client)
        task.cancel()
    assert not seen_overlap["v"]
    rs = await replicasets(client)
    assert [r["spec"]["replicas"] for r in rs] == [0, 2]
    assert rs[0]["metadata"]["name"] == old["metadata"]["name"]


async def test_paused_deployment_reports_deployment_paused_and_does_not_roll(
    client: Any, ctrl: DeploymentController
) -> None:
    async with PodReadier(client):
        await client.create(DEPLOYMENTS, deployment(replicas=1), "default")
        await wait_rolled_out(client)
        await client.patch(DEPLOYMENTS, "web", {"spec": {"paused": True}}, "default")
        got = await wait_object(
            client,
            DEPLOYMENTS,
            "web",
            "default",
            lambda o: cond(o, "Progressing").get("reason") == "DeploymentPaused",
        )
        assert cond(got, "Progressing")["status"] == "Unknown"
        assert cond(got, "Progressing")["message"] == "Deployment is paused"
        patch = {"spec": {"template": {"metadata": {"annotations": {"x": "1"}}}}}
        await client.patch(DEPLOYMENTS, "web", patch, "default")
        await wait_object(
            client,
            DEPLOYMENTS,
            "web",
            "default",
            lambda o: (o or {}).get("status", {}).get("observedGeneration") == 3,
        )
        assert len(await replicasets(client)) == 1
        await client.patch(DEPLOYMENTS, "web", {"spec": {"paused": False}}, "default")
        await wait_rolled_out(client)
    assert len(await replicasets(client)) == 2


async def test_progress_deadline_exceeded_when_pods_never_become_ready(
    client: Any, ctrl: DeploymentController
) -> None:
    await client.create(DEPLOYMENTS, deployment(replicas=1, progressDeadlineSeconds=1), "default")
    got = await wait_object(
        client,
        DEPLOYMENTS,
        "web",
        "default",
        lambda o: cond(o, "Progressing").get("reason") == "ProgressDeadlineExceeded",
        timeout=15,
    )
    (rs,) = await replicasets(client)
    assert cond(got, "Progressing")["status"] == "False"
    assert (
        cond(got, "Progressing")["message"]
        == f'ReplicaSet "{rs["metadata"]["name"]}" has timed out progressing.'
    )
    assert cond(got, "Available")["reason"] == "MinimumReplicasUnavailable"


async def test_revision_history_limit_deletes_the_oldest_empty_replicasets(
    client: Any, ctrl: DeploymentController
) -> None:
    async with PodReadier(client):
        await client.create(DEPLOYMENTS, deployment(replicas=1, revisionHistoryLimit=1), "default")
        for image in ("nginx:2", "nginx:3", "nginx:4"):
            await wait_rolled_out(client)
            patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}}
            await client.patch(
                DEPLOYMENTS, "web", patch, "default", patch_type="application/strategic-merge-patch+json"
            )
        await wait_rolled_out(client)
        lst = await wait_for_list(client, REPLICASETS, "default", lambda items: len(items) == 2)
    assert sorted(du.revision_of(r) for r in lst) == [3, 4]


async def test_scaling_a_deployment_scales_its_replicaset(client: Any, ctrl: DeploymentController) -> None:
    async with PodReadier(client):
        await client.create(DEPLOYMENTS, deployment(replicas=1), "default")
        await wait_rolled_out(client)
        await client.patch(DEPLOYMENTS, "web", {"spec": {"replicas": 4}}, "default")
        await wait_object(
            client, DEPLOYMENTS, "web", "default", lambda o: rolled_out(o) and o["status"]["replicas"] == 4
        )
    (rs,) = await replicasets(client)
    assert rs["spec"]["replicas"] == 4 and rs["metadata"]["annotations"][du.DESIRED_REPLICAS] == "4"


def test_proportional_scaling_math_follows_kube() -> None:
    d = deployment(
        replicas=10, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}}
    )
    assert du.max_surge(d) == 3 and du.max_unavailable(d) == 2
    assert du.resolve_fenceposts("0%", "0%", 10) == (0, 1)
    assert du.resolve_fenceposts("25%", "25%", 3) == (1, 0)
    rs = {"metadata": {"name": "a", "annotations": {du.MAX_REPLICAS: "8"}}, "spec": {"replicas": 4}}
    # 4 * 13 / 8 = 6.5 -> 7: the share grows by 3
    assert du.replicaset_fraction(rs, d) == 3
    assert du.proportion(rs, d, 5, 0) == 3 and du.proportion(rs, d, 2, 0) == 2


class _RecordingClient:
    """Just enough of a client for one Rollout step: ReplicaSet updates are recorded."""

    def __init__(self) -> None:
        self.updates: list[Obj] = []

    async def update(self, gvr: Any, obj: Obj, namespace: str = "") -> Obj:
        self.updates.append(obj)
        return obj

    async def update_status(self, gvr: Any, obj: Obj, namespace: str = "") -> Obj:
        return obj


class _NullRecorder:
    def event(self, *args: Any) -> None:
        pass


async def test_unhealthy_cleanup_never_scales_an_old_replicaset_up() -> None:
    from apiserver.meta import Clock
    from controllers.base import Requeue
    from controllers.deployment.rollout import Rollout

    d = deployment(replicas=4)
    d["metadata"].update(uid="d", generation=2)
    du_spec = d["spec"]
    du_spec["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}
    # the old ReplicaSet was scaled down to 1 but its status still reports 3 available pods
    old = {
        "metadata": {
            "name": "web-old",
            "namespace": "default",
            "uid": "o",
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {"replicas": 1},
        "status": {"replicas": 3, "availableReplicas": 3},
    }
    new = {
        "metadata": {
            "name": "web-new",
            "namespace": "default",
            "uid": "n",
            "creationTimestamp": "2026-01-02T00:00:00Z",
        },
        "spec": {"replicas": 4},
        "status": {"replicas": 4, "availableReplicas": 0},
    }
    client = _RecordingClient()
    r = Rollout(client, _NullRecorder(), Clock(), d, [old, new], dict)  # type: ignore[arg-type]
    with pytest.raises(
        Requeue, match="when cleaning up unhealthy replicas, got invalid request to scale down"
    ):
        await r._cleanup_unhealthy([old], 5)
    assert client.updates == []


def test_new_replicaset_annotations_copy_change_cause_and_keep_the_revision_history() -> None:
    d = deployment(
        replicas=2,
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
    )
    d["metadata"]["annotations"] = {
        "kubernetes.io/change-cause": "kubectl set image",
        du.LAST_APPLIED: "{}",
        du.REVISION: "7",
    }
    rs: Obj = {
        "metadata": {"annotations": {du.REVISION: "2", du.REVISION_HISTORY: "1"}},
        "spec": {"replicas": 2},
    }
    assert du.set_new_replicaset_annotations(d, rs, "5", True)
    ann = rs["metadata"]["annotations"]
    assert ann["kubernetes.io/change-cause"] == "kubectl set image"
    assert du.LAST_APPLIED not in ann and ann[du.REVISION] == "5" and ann[du.REVISION_HISTORY] == "1,2"
    fresh: Obj = {"metadata": {}, "spec": {"replicas": 0}}
    du.set_new_replicaset_annotations(d, fresh, "1", False)
    assert fresh["metadata"]["annotations"][du.DESIRED_REPLICAS] == "2"
    assert fresh["metadata"]["annotations"][du.MAX_REPLICAS] == "3"  # 2 + 25% surge rounded up
