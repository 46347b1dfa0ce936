"""Shared pieces of the PodGroup scheduling tests: PodGroups, member pods, condition waits."""

from __future__ import annotations

from typing import Any

from apiserver.api.types import Obj
from apiserver.client.interface import PODGROUPS, PODS, Client
from tests.helpers import wait_for_list, wait_for_object
from tests.integration.scheduler_support import node_name, pod

RACK = "topology.kubernetes.io/rack"
ZONE = "topology.kubernetes.io/zone"


def pod_group(
    name: str,
    min_count: int | None = None,
    *,
    topology: str = "",
    namespace: str = "default",
    priority_class: str = "",
) -> Obj:
    """A gang PodGroup (``min_count``) or, with ``min_count=None``, a basic one."""
    policy: Obj = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    spec: Obj = {"schedulingPolicy": policy}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def member(name: str, group: str, *, cpu: str = "1", gpu: int = 0, **kw: Any) -> Obj:
    """A pod of PodGroup ``group`` requesting ``cpu`` (and ``gpu`` nvidia.com/gpu)."""
    extra = dict(kw.pop("extra_spec", None) or {})
    extra["schedulingGroup"] = {"podGroupName": group}
    p = pod(name, cpu=cpu, extra_spec=extra, **kw)
    if gpu:
        res = p["spec"]["containers"][0]["resources"]
        res["requests"]["nvidia.com/gpu"] = str(gpu)
        res["limits"] = {"nvidia.com/gpu": str(gpu)}
    return p


def gpu_node(name: str, gpus: int, **labels: str) -> Obj:
    from tests.integration.scheduler_support import node

    n = node(name, cpu="32", memory="64Gi", **labels)
    for k in ("capacity", "allocatable"):
        n["status"][k]["nvidia.com/gpu"] = str(gpus)
    return n


def scheduled_condition(pg: Obj | None) -> Obj | None:
    for c in ((pg or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodGroupInitiallyScheduled":
            return c
    return None


async def wait_pod_group(
    client: Client, name: str, status: str, ns: str = "default", timeout: float = 15
) -> Obj:
    """Until the PodGroup's PodGroupInitiallyScheduled condition has ``status``; returns the group."""

    def ok(o: Obj | None) -> bool:
        c = scheduled_condition(o)
        return c is not None and c.get("status") == status

    pg = await wait_for_object(client, PODGROUPS, name, ns, ok, timeout)
    assert pg is not None
    return pg


async def bound_members(client: Client, group: str, ns: str = "default") -> list[Obj]:
    lst = await client.list(PODS, ns)
    return [
        p
        for p in lst["items"]
        if ((p["spec"].get("schedulingGroup") or {}).get("podGroupName") == group) and node_name(p)
    ]


async def wait_members_bound(
    client: Client, group: str, count: int, ns: str = "default", timeout: float = 15
) -> list[Obj]:
    def ok(items: list[Obj]) -> bool:
        return (
            sum(
                1
                for p in items
                if (p["spec"].get("schedulingGroup") or {}).get("podGroupName") == group and node_name(p)
            )
            >= count
        )

    items = await wait_for_list(client, PODS, ns, ok, timeout)
    return [
        p
        for p in items
        if (p["spec"].get("schedulingGroup") or {}).get("podGroupName") == group and node_name(p)
    ]
