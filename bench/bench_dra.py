"""DRA benchmark (issue 9): a PodGroup of N pods sharing one ResourceClaim vs N pod-scoped claims.

Run as ``python bench/bench_dra.py`` (``--pods 64 --runs 3``). Each run is a fresh in-process
control plane with only the ResourceClaim controller and the scheduler (no node agent: binding is
the end point), 8 nodes with 8 GPUs each (``gpu.example.com``) in one rack that also has one
shared accelerator (``shared-accelerator.example.com``, a rack-scoped ResourceSlice).

* **shared**: one gang PodGroup (``minCount`` N) whose ``spec.resourceClaims`` names a template
  for the shared accelerator; N pods with the matching entry. One claim is generated, allocated
  once and reserved for the PodGroup.
* **pod-scoped**: N pods (no PodGroup), each with its own template claim for one GPU. N claims are
  generated, allocated and reserved, one per pod.

Reported per variant (median over runs): seconds from the first pod create until a watch has seen
every pod bound (claims allocated on the way), and the API writes the claim controller and the
scheduler made (creates, updates, patches; Events excluded), split by resource.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from apiserver.api.types import Obj

if __package__ in (None, ""):  # run as a script: make the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from apiserver.client.interface import (  # noqa: E402
    DEVICECLASSES,
    EVENTS,
    GVR,
    NODES,
    PODGROUPS,
    PODS,
    RESOURCECLAIMS,
    RESOURCECLAIMTEMPLATES,
    RESOURCESLICES,
    Client,
)
from controllers.resourceclaim.controller import ResourceClaimController  # noqa: E402
from featuregates import FeatureGate  # noqa: E402
from gangplane.controlplane import ControlPlane, ControlPlaneOptions  # noqa: E402
from scheduler.scheduler import Scheduler  # noqa: E402

NS = "default"
WRITES = frozenset(
    {"create", "update", "update_status", "patch", "delete", "create_subresource", "update_subresource"}
)


class WriteCounter:
    """Counts a component's writes by resource (Events excluded: the recorder batches them)."""

    def __init__(self, inner: Client) -> None:
        self.inner = inner
        self.by_resource: dict[str, int] = {}

    def __getattr__(self, verb: str) -> Any:
        method = getattr(self.inner, verb)
        if verb not in WRITES:
            return method

        def call(gvr: GVR, *args: Any, **kwargs: Any) -> Any:
            if gvr != EVENTS:
                sub = kwargs.get("subresource") or (
                    args[1] if verb in ("create_subresource", "update_subresource") else ""
                )
                key = (f"{gvr.resource}/{sub}" if sub else gvr.resource) + f" {verb}"
                if verb == "update_status":
                    key = f"{gvr.resource}/status {verb}"
                self.by_resource[key] = self.by_resource.get(key, 0) + 1
            return method(gvr, *args, **kwargs)

        return call


def _node(i: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"n{i}",
            "labels": {"topology.kubernetes.io/rack": "r0", "kubernetes.io/hostname": f"n{i}"},
        },
        "status": {
            "capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"},
            "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _slice(name: str, driver: str, devices: list[str], **where: Any) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": driver,
            "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": d} for d in devices],
            **where,
        },
    }


def _template(name: str, device_class: str) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "spec": {
                "devices": {"requests": [{"name": "device", "exactly": {"deviceClassName": device_class}}]}
            }
        },
    }


def _pod(i: int, template: str, group: str | None) -> Obj:
    spec: Obj = {
        "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "acc"}]}}],
        "resourceClaims": [{"name": "acc", "resourceClaimTemplateName": template}],
    }
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": NS}, "spec": spec}


async def _cluster(client: Client) -> None:
    for i in range(8):
        await client.create(NODES, _node(i))
        await client.create(
            RESOURCESLICES,
            _slice(f"n{i}-gpu", "gpu.example.com", [f"gpu-{d}" for d in range(8)], nodeName=f"n{i}"),
        )
    rack = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "topology.kubernetes.io/rack", "operator": "In", "values": ["r0"]}]}
        ]
    }
    await client.create(
        RESOURCESLICES, _slice("r0-shared", "shared-accelerator.example.com", ["accel-0"], nodeSelector=rack)
    )
    for cls in ("gpu.example.com", "shared-accelerator.example.com"):
        await client.create(
            DEVICECLASSES,
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": cls},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{cls}"'}}]},
            },
        )


async def _all_bound(client: Client, n: int) -> None:
    lst = await client.list(PODS, NS)
    bound = {p["metadata"]["name"] for p in lst["items"] if p["spec"].get("nodeName")}
    if len(bound) >= n:
        return
    async for ev in client.watch(PODS, NS, resource_version=lst["metadata"]["resourceVersion"]):
        if ev.type in ("ADDED", "MODIFIED") and ev.object["spec"].get("nodeName"):
            bound.add(ev.object["metadata"]["name"])
            if len(bound) >= n:
                return


async def run(variant: str, pods: int) -> tuple[float, dict[str, int], dict[str, int], int]:
    cp = ControlPlane(ControlPlaneOptions(gates=FeatureGate()))
    client = cp.client("bench")
    ctrl_client = WriteCounter(cp.client("resource-claim-controller"))
    sched_client = WriteCounter(cp.client("kube-scheduler"))
    cp.register(
        "resource-claim-controller",
        lambda p: ResourceClaimController(ctrl_client, group_claims=True, clock=p.clock),
    )  # type: ignore[arg-type]
    cp.register("scheduler", lambda ctx: Scheduler(sched_client, ctx.gates, ctx.clock, ctx.metrics_registry))  # type: ignore[arg-type]
    try:
        await _cluster(client)
        await cp.start_component("resource-claim-controller")
        await cp.start_component("scheduler")
        group = None
        if variant == "shared":
            await client.create(
                RESOURCECLAIMTEMPLATES, _template("shared", "shared-accelerator.example.com"), NS
            )
            group = "g"
            await client.create(
                PODGROUPS,
                {
                    "apiVersion": "scheduling.k8s.io/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": group, "namespace": NS},
                    "spec": {
                        "schedulingPolicy": {"gang": {"minCount": pods}},
                        "resourceClaims": [{"name": "acc", "resourceClaimTemplateName": "shared"}],
                    },
                },
                NS,
            )
        else:
            await client.create(RESOURCECLAIMTEMPLATES, _template("one-gpu", "gpu.example.com"), NS)
        start = time.perf_counter()
        for i in range(pods):
            await client.create(PODS, _pod(i, "shared" if group else "one-gpu", group), NS)
        await asyncio.wait_for(_all_bound(client, pods), 120)
        secs = time.perf_counter() - start
        claims = len((await client.list(RESOURCECLAIMS, NS))["items"])
        return secs, dict(ctrl_client.by_resource), dict(sched_client.by_resource), claims
    finally:
        await cp.stop()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pods", type=int, default=64)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    for variant in ("shared", "pod-scoped"):
        results = [await run(variant, args.pods) for _ in range(args.runs)]
        secs = statistics.median(r[0] for r in results)
        ctrl, sched, claims = results[-1][1], results[-1][2], results[-1][3]
        print(
            f"{variant:10s} {args.pods} pods: {secs:6.3f} s to all bound | claims {claims} | "
            f"claim-controller writes {sum(ctrl.values())} {dict(sorted(ctrl.items()))} | "
            f"scheduler writes {sum(sched.values())} {dict(sorted(sched.items()))}"
        )


if __name__ == "__main__":
    asyncio.run(main())
