"""Shared support for the DRA (KEP-5729 under KEP-6277 Story 4) integration tests.

:func:`start_dra_stack` runs a small simulated cluster — 2 racks × ``per_rack`` nodes, each rack
with one shared accelerator (``shared-accelerator.example.com``, a rack-scoped ResourceSlice)
and each node with ``gpus`` node-local GPUs (``gpu.example.com``) — plus the controllers the
Story needs (StatefulSet with KEP-6277, ResourceClaim, garbage collector, PodGroup protection),
the scheduler and the node agent. Waits are event-driven (watches), never sleeps.
"""

from __future__ import annotations

from typing import Any

from apiserver.api.types import Obj
from apiserver.client.interface import (
    PODGROUPS,
    PODS,
    RESOURCECLAIMS,
    RESOURCECLAIMTEMPLATES,
    STATEFULSETS,
    Client,
)
from controllers.fleet import parse_fleet
from gangplane.controlplane import ControlPlane, default_components
from tests.helpers import wait_for_list, wait_for_object

NS = "default"
SHARED_CLASS = "shared-accelerator.example.com"
GPU_CLASS = "gpu.example.com"
TIME_SCALE = 0.001
CONTROLLERS = "statefulset,resource-claim-controller,garbage-collector-controller,podgroup-protection-controller,node-agent"


def fleet_doc(per_rack: int = 2, gpus: int = 2, pods: int = 110) -> Obj:
    return {
        "deviceClasses": [{"name": GPU_CLASS}, {"name": SHARED_CLASS}],
        "nodes": [
            {
                "name": "n-{rack}-{index}",
                "racksPerZone": 2,
                "count": per_rack,
                "capacity": {"cpu": "32", "memory": "64Gi", "pods": str(pods)},
                "devices": [
                    {"driver": GPU_CLASS, "count": gpus, "name": "gpu-{d}", "attributes": {"model": "h100"}},
                    {"driver": SHARED_CLASS, "scope": "rack", "count": 1, "name": "accel-{d}"},
                ],
            }
        ],
    }


async def start_dra_stack(
    cp: ControlPlane, fleet: Obj | None = None, controllers: str = CONTROLLERS
) -> list[str]:
    """Start the components (node agent first, so its nodes, slices and classes exist)."""
    from controllers.nodeagent import node_agent_factory

    names = default_components(cp, parse_fleet(fleet or fleet_doc()), controllers)
    cp.register("node-agent", node_agent_factory(parse_fleet(fleet or fleet_doc()), time_scale=TIME_SCALE))
    for name in ("node-agent", *[n for n in names if n != "node-agent"]):
        await cp.start_component(name)
    return names


def claim_template(name: str = "shared-accelerator", device_class: str = SHARED_CLASS, **exactly: Any) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [{"name": "device", "exactly": {"deviceClassName": device_class, **exactly}}]
                }
            }
        },
    }


def shared_sts(
    name: str = "shard-server",
    replicas: int = 4,
    *,
    template: str = "shared-accelerator",
    policy: Obj | None = None,
    pod_claims: list[Obj] | None = None,
) -> Obj:
    """KEP-6277 Story 4's StatefulSet: one PodGroup claim ``shared`` the pod template matches."""
    claim = {"name": "shared", "resourceClaimTemplateName": template}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "serviceName": name,
            "replicas": replicas,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "scheduling": {"schedulingPolicy": policy or {"gang": {}}, "resourceClaims": [claim]},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {
                            "name": "server",
                            "image": "my-org/shard-server:latest",
                            "resources": {"claims": [{"name": "shared"}]},
                        }
                    ],
                    "resourceClaims": pod_claims if pod_claims is not None else [dict(claim)],
                },
            },
        },
    }


def running(p: Obj) -> bool:
    return (p.get("status") or {}).get("phase") == "Running"


async def wait_running(client: Client, app: str, n: int, timeout: float = 30.0) -> list[Obj]:
    return await wait_for_list(
        client,
        PODS,
        NS,
        lambda items: len([p for p in items if running(p)]) >= n,
        timeout=timeout,
        label_selector=f"app={app}",
    )


async def wait_claims(client: Client, cond: Any, timeout: float = 20.0) -> list[Obj]:
    return await wait_for_list(client, RESOURCECLAIMS, NS, cond, timeout=timeout)


async def only_pod_group(client: Client) -> Obj:
    items = await wait_for_list(client, PODGROUPS, NS, lambda i: len(i) == 1)
    return items[0]


async def create_story4(client: Client, replicas: int = 4, **kw: Any) -> None:
    await client.create(RESOURCECLAIMTEMPLATES, claim_template(), NS)
    await client.create(STATEFULSETS, shared_sts(replicas=replicas, **kw), NS)


def claim_owner(claim: Obj) -> tuple[str, str]:
    ref = next(r for r in claim["metadata"].get("ownerReferences", []) if r.get("controller"))
    return ref["kind"], ref["name"]


async def wait_claim(client: Client, name: str, cond: Any, timeout: float = 20.0) -> Obj | None:
    return await wait_for_object(client, RESOURCECLAIMS, name, NS, cond, timeout=timeout)


def group_reservation(pg: Obj) -> list[Obj]:
    return [
        {
            "apiGroup": "scheduling.k8s.io",
            "resource": "podgroups",
            "name": pg["metadata"]["name"],
            "uid": pg["metadata"]["uid"],
        }
    ]
