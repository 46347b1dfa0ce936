"""DaemonSet controller behaviour through the in-process client (nodes created by hand, no scheduler)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import CONTROLLERREVISIONS, DAEMONSETS, EVENTS, NODES, PODS
from controllers.daemonset import DaemonSetsController
from controllers.daemonset.predicates import node_should_run
from controllers.manager import DAEMONSET, register_controllers
from controllers.testing import PodReadier, set_pod_status, wait_object
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list

pytestmark = pytest.mark.anyio


def daemonset(name: str = "agent", **spec: Any) -> Obj:
    body: Obj = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "agent:1"}]},
            },
        },
    }
    body["spec"].update(spec)
    return body


async def add_node(
    client: Any, name: str, labels: dict[str, str] | None = None, taints: list[Obj] | None = None
) -> Obj:
    body: Obj = {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {},
    }
    if taints:
        body["spec"]["taints"] = taints
    return await client.create(NODES, body)


@pytest.fixture
async def ctrl(cp: ControlPlane, client: Any) -> AsyncIterator[DaemonSetsController]:
    for i in range(3):
        await add_node(client, f"n{i}", {"pool": "a" if i < 2 else "b"})
    register_controllers(cp, "daemonset")
    c = await cp.start_component(DAEMONSET)
    assert isinstance(c, DaemonSetsController)
    yield c


def pinned_node(pod: Obj) -> str:
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    return terms[0]["matchFields"][0]["values"][0]


async def live_pods(client: Any, n: int | None = None, pred: Any = None) -> list[Obj]:
    def ok(items: list[Obj]) -> bool:
        live = [p for p in items if not p["metadata"].get("deletionTimestamp")]
        if n is not None and len(live) != n:
            return False
        return pred(live) if pred else True

    items = await wait_for_list(client, PODS, "default", ok, label_selector="app=agent")
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def status_is(**want: int) -> Any:
    return lambda o: o is not None and all((o.get("status") or {}).get(k) == v for k, v in want.items())


async def test_one_pod_per_node_pinned_by_node_affinity_with_default_tolerations(
    client: Any, ctrl: DaemonSetsController
) -> None:
    ds = await client.create(DAEMONSETS, daemonset(), "default")
    pods = await live_pods(client, 3)
    assert sorted(pinned_node(p) for p in pods) == ["n0", "n1", "n2"]
    p = pods[0]
    assert p["metadata"]["generateName"] == "agent-"
    assert p["metadata"]["ownerReferences"][0]["uid"] == ds["metadata"]["uid"]
    assert p["metadata"]["labels"]["pod-template-generation"] == "1"
    keys = {(t["key"], t["effect"]) for t in p["spec"]["tolerations"]}
    assert {
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    } <= keys
    (rev,) = (await client.list(CONTROLLERREVISIONS, "default"))["items"]
    assert (
        p["metadata"]["labels"]["controller-revision-hash"]
        == rev["metadata"]["labels"]["controller-revision-hash"]
    )
    assert rev["metadata"]["name"] == f"agent-{rev['metadata']['labels']['controller-revision-hash']}"
    got = await wait_object(
        client, DAEMONSETS, "agent", "default", status_is(desiredNumberScheduled=3, currentNumberScheduled=3)
    )
    assert (
        got is not None
        and got["status"]["numberMisscheduled"] == 0
        and got["status"]["updatedNumberScheduled"] == 3
    )


async def test_node_selector_limits_the_nodes(client: Any, ctrl: DaemonSetsController) -> None:
    body = daemonset()
    body["spec"]["template"]["spec"]["nodeSelector"] = {"pool": "a"}
    await client.create(DAEMONSETS, body, "default")
    pods = await live_pods(client, 2)
    assert sorted(pinned_node(p) for p in pods) == ["n0", "n1"]
    await client.patch(NODES, "n2", {"metadata": {"labels": {"pool": "a"}}})
    pods = await live_pods(client, 3)
    await client.patch(NODES, "n0", {"metadata": {"labels": {"pool": "b"}}})
    pods = await live_pods(client, 2)
    assert sorted(pinned_node(p) for p in pods) == ["n1", "n2"]


async def test_taints_keep_pods_off_unless_tolerated_and_no_execute_evicts(
    client: Any, ctrl: DaemonSetsController
) -> None:
    await add_node(client, "tainted", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}])
    await client.create(DAEMONSETS, daemonset(), "default")
    pods = await live_pods(client, 3)
    assert "tainted" not in {pinned_node(p) for p in pods}
    # a NoSchedule taint added later does not evict; a NoExecute one does
    await client.patch(NODES, "n0", {"spec": {"taints": [{"key": "x", "effect": "NoSchedule"}]}})
    await ctrl.wait_idle()
    assert len(await live_pods(client)) == 3
    await client.patch(NODES, "n0", {"spec": {"taints": [{"key": "x", "effect": "NoExecute"}]}})
    pods = await live_pods(client, 2)
    assert "n0" not in {pinned_node(p) for p in pods}
    # the default tolerations keep pods on not-ready nodes
    await client.patch(
        NODES, "n1", {"spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]}}
    )
    await ctrl.wait_idle()
    assert len(await live_pods(client)) == 2


async def test_tolerating_pods_run_on_tainted_nodes_and_new_nodes_get_pods(
    client: Any, ctrl: DaemonSetsController
) -> None:
    await add_node(client, "tainted", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}])
    body = daemonset()
    body["spec"]["template"]["spec"]["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    await client.create(DAEMONSETS, body, "default")
    await live_pods(client, 4)
    await add_node(client, "n9")
    pods = await live_pods(client, 5)
    assert "n9" in {pinned_node(p) for p in pods}
    await client.delete(NODES, "n9")
    pods = await live_pods(client, 4)
    assert "n9" not in {pinned_node(p) for p in pods}


async def test_failed_daemon_pods_are_killed_and_replaced(client: Any, ctrl: DaemonSetsController) -> None:
    await client.create(DAEMONSETS, daemonset(), "default")
    pods = await live_pods(client, 3)
    victim = pods[0]
    await set_pod_status(client, victim["metadata"]["name"], phase="Failed", ready=False)
    await live_pods(
        client, 3, lambda live: victim["metadata"]["name"] not in {p["metadata"]["name"] for p in live}
    )
    await ctrl.recorder.flush()
    evs = [(e["reason"], e["message"]) for e in (await client.list(EVENTS, "default"))["items"]]
    assert (
        "FailedDaemonPod",
        f"Found failed daemon pod default/{victim['metadata']['name']} on node {pinned_node(victim)}, will try to kill it",
    ) in evs


def _is_ready(p: Obj) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (p.get("status") or {}).get("conditions") or []
    )


async def _track_unavailable(client: Any, lst: Obj, worst: dict[str, int]) -> None:
    """The most nodes without a Ready pod at once, and the most live pods (while an update runs)."""
    ready = {p["metadata"]["name"]: (pinned_node(p), _is_ready(p)) for p in lst["items"]}
    rv = lst["metadata"]["resourceVersion"]
    async for ev in client.watch(PODS, "default", label_selector="app=agent", resource_version=rv):
        p = ev.object
        if ev.type == "DELETED" or p["metadata"].get("deletionTimestamp"):
            ready.pop(p["metadata"]["name"], None)
        else:
            ready[p["metadata"]["name"]] = (pinned_node(p), _is_ready(p))
        nodes_ready = {n for n, ok in ready.values() if ok}
        worst["unavailable"] = max(worst["unavailable"], 3 - len(nodes_ready))
        worst["pods"] = max(worst["pods"], len(ready))


async def test_rolling_update_replaces_pods_within_max_unavailable(
    client: Any, ctrl: DaemonSetsController
) -> None:
    async with PodReadier(client):
        await client.create(DAEMONSETS, daemonset(), "default")
        await wait_object(client, DAEMONSETS, "agent", "default", status_is(numberAvailable=3))
        lst = await client.list(PODS, "default")
        worst = {"unavailable": 0, "pods": 0}
        task = asyncio.create_task(_track_unavailable(client, lst, worst))
        patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "agent:2"}]}}}}
        await client.patch(
            DAEMONSETS, "agent", patch, "default", patch_type="application/strategic-merge-patch+json"
        )
        got = await wait_object(
            client,
            DAEMONSETS,
            "agent",
            "default",
            status_is(observedGeneration=2, updatedNumberScheduled=3, numberAvailable=3),
        )
        task.cancel()
    assert got is not None
    assert worst["unavailable"] == 1
    pods = await live_pods(client, 3)
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {"agent:2"}
    assert {p["metadata"]["labels"]["pod-template-generation"] for p in pods} == {"2"}
    assert len((await client.list(CONTROLLERREVISIONS, "default"))["items"]) == 2


async def test_rolling_update_with_max_surge_never_leaves_a_node_without_a_ready_pod(
    client: Any, ctrl: DaemonSetsController
) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    async with PodReadier(client):
        await client.create(DAEMONSETS, daemonset(updateStrategy=strategy), "default")
        await wait_object(client, DAEMONSETS, "agent", "default", status_is(numberAvailable=3))
        lst = await client.list(PODS, "default")
        worst = {"unavailable": 0, "pods": 0}
        task = asyncio.create_task(_track_unavailable(client, lst, worst))
        patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "agent:2"}]}}}}
        await client.patch(
            DAEMONSETS, "agent", patch, "default", patch_type="application/strategic-merge-patch+json"
        )
        await wait_object(
            client,
            DAEMONSETS,
            "agent",
            "default",
            status_is(observedGeneration=2, updatedNumberScheduled=3, numberAvailable=3),
        )
        await live_pods(
            client, 3, lambda live: {p["spec"]["containers"][0]["image"] for p in live} == {"agent:2"}
        )
        task.cancel()
    assert worst["unavailable"] == 0 and worst["pods"] == 4


def test_node_should_run_reports_continue_running_for_tolerated_no_execute() -> None:
    template = {"spec": {"containers": [{"name": "c", "image": "x"}], "nodeSelector": {"pool": "a"}}}
    node = {
        "metadata": {"name": "n", "labels": {"pool": "a"}},
        "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
    }
    assert node_should_run(node, template) == (False, True)
    node["spec"]["taints"] = [{"key": "k", "effect": "NoExecute"}]
    assert node_should_run(node, template) == (False, False)
    node["spec"]["taints"] = []
    node["metadata"]["labels"] = {"pool": "b"}
    assert node_should_run(node, template) == (False, False)


@pytest.mark.parametrize(
    ("label", "runs"),
    [
        pytest.param("11", True, id="greater"),
        pytest.param("9", False, id="smaller"),
        pytest.param("x", False, id="not a number"),
        pytest.param(str(2**63), False, id="beyond int64: not a number to kube"),
    ],
)
def test_node_should_run_compares_gt_as_the_scheduler_does(label: str, runs: bool) -> None:
    """Gt/Lt parse as 64-bit integers (``strconv.ParseInt``), as in the scheduler's NodeAffinity."""
    gt = {"key": "cores", "operator": "Gt", "values": ["10"]}
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [gt]}]
            }
        }
    }
    template = {"spec": {"containers": [{"name": "c", "image": "x"}], "affinity": affinity}}
    node = {"metadata": {"name": "n", "labels": {"cores": label}}, "spec": {}}
    assert node_should_run(node, template) == (runs, runs)
