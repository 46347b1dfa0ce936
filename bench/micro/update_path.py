"""The API server's CPU per update-path write, by kind, on a bare in-process API (a script).

    python bench/micro/update_path.py [--writes 600]            # this tree (or PYTHONPATH's)
    python bench/micro/update_path.py --pairs BASE NEW [--rounds 3]
    python bench/micro/update_path.py --profile pod-status     # cProfile of one kind's loop
    UPD_SORT=tottime UPD_N=60 python bench/micro/update_path.py --profile pod-status  # other order/length

The four writes of the update path a gang of StatefulSet pods makes, each over objects shaped
as the controllers make them (a plane without controllers: nothing else writes meanwhile; the
objects are read ``read_only`` before each kind, as the informers of a running plane hold them):

* ``sts-status``: ``update_status`` of a StatefulSet with the controller's status (replicas,
  revisions, observedGeneration), the body being the stored set with a new status;
* ``pg-condition``: the scheduler's merge patch on ``podgroups/status`` of the
  ``PodGroupScheduled`` condition, with the resourceVersion it read as a precondition;
* ``binding``: ``pods/binding`` of an owned pod to a node;
* ``pod-status``: the node agent's ``update_status`` of a bound pod to Running (conditions,
  IPs, a container status);
* ``lease-renew``: the node agent's renewal of a node's Lease (owned by its Node), the body
  being the Lease the last write returned with a new ``spec.renewTime``, twice per Lease;
* ``agent-pod-status``, ``agent-lease-renew``: the same two writes exactly as the node agent
  of the tree measured sends them: the pod status body built by its ``status_write_body``
  around the informer's read-only pod (no managedFields), with the ``handoff``/``read_only``
  options where the tree's client has them, the Lease renewed from the last answer taken
  ``read_only`` where it can be.

Each kind runs ``--writes`` times in a row on distinct objects, with the cyclic collector tuned
(and the set-up frozen) as the plane tunes it; printed is the process CPU per write
(``time.process_time``) in µs. ``--pairs`` runs this script in a child process per tree
(``PYTHONPATH=<tree>``), alternating the two trees ``--rounds`` times, and prints per kind the
minimum over rounds of each and the ratio. Numbers go in docs/bench.md, never into assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import pstats
import sys
import time
from typing import Any

KINDS = (
    "sts-status",
    "pg-condition",
    "binding",
    "pod-status",
    "lease-renew",
    "agent-pod-status",
    "agent-lease-renew",
)
NS = "default"
NOW = "2026-12-05T08:00:00Z"


def _statefulset(i: int) -> dict[str, Any]:
    """A gang set of 3 as the gang bench creates it (:func:`bench.workloads.statefulsets.statefulset`)."""
    from bench.workloads.statefulsets import statefulset

    sts = statefulset(f"s{i}", 3, gang=True, topology="")
    sts["metadata"]["namespace"] = NS
    return sts


def _sts_status(sts: dict[str, Any]) -> dict[str, Any]:
    rev = f"{sts['metadata']['name']}-7d9c8b6f5"
    return {
        "observedGeneration": 1,
        "replicas": 3,
        "readyReplicas": 0,
        "currentReplicas": 3,
        "updatedReplicas": 3,
        "currentRevision": rev,
        "updateRevision": rev,
        "collisionCount": 0,
        "availableReplicas": 0,
    }


def _pod_group(i: int, owner_uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": f"s{i}-0",
            "namespace": NS,
            # as the StatefulSet controller makes it: owned by its set (the controller) and by
            # its Workload (session 11; before, only a Workload reference)
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": f"s{i}",
                    "uid": owner_uid[::-1],
                    "controller": True,
                    "blockOwnerDeletion": True,
                },
                {
                    "apiVersion": "scheduling.k8s.io/v1beta1",
                    "kind": "Workload",
                    "name": f"s{i}",
                    "uid": owner_uid,
                    "blockOwnerDeletion": True,
                },
            ],
        },
        "spec": {
            "workloadRef": {"workloadName": f"s{i}", "templateName": "gang"},
            "schedulingPolicy": {"gang": {"minCount": 3}},
        },
    }


def _pod(i: int, owner_uid: str) -> dict[str, Any]:
    name = f"s{i}-{i % 3}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "labels": {
                "app": f"s{i}",
                "apps.kubernetes.io/pod-index": str(i % 3),
                "statefulset.kubernetes.io/pod-name": name,
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": f"s{i}",
                    "uid": owner_uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "hostname": name,
            "subdomain": f"s{i}",
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m"}},
                }
            ],
        },
    }


def _lease(i: int, node_uid: str) -> dict[str, Any]:
    """A node's Lease as the node agent creates it (``NodeAgent._new_lease``)."""
    name = f"node-{i:05d}"
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": name,
            "namespace": "kube-node-lease",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": node_uid}],
        },
        "spec": {
            "holderIdentity": name,
            "leaseDurationSeconds": 40,
            "renewTime": "2026-12-05T08:00:00.000000Z",
        },
    }


def _renewed(lease: dict[str, Any], second: int) -> dict[str, Any]:
    """``lease`` renewed as the agent renews it: the returned object with a new renewTime."""
    return {**lease, "spec": {**lease["spec"], "renewTime": f"2026-12-05T08:00:{second:02d}.000000Z"}}


def running_status(i: int, conditions: list[dict[str, Any]]) -> dict[str, Any]:
    """What the node agent writes for pod ``i`` once its container runs (its own IP, ``conditions``)."""
    ip = f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}"
    return {
        "phase": "Running",
        "conditions": conditions,
        "hostIP": "192.168.0.1",
        "hostIPs": [{"ip": "192.168.0.1"}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": NOW,
        "qosClass": "Burstable",
        "containerStatuses": [
            {
                "name": "c",
                "image": "registry.k8s.io/pause:3.10",
                "imageID": "registry.k8s.io/pause@sha256:0",
                "containerID": f"containerd://{i:064x}",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": NOW}},
                "lastState": {},
            }
        ],
    }


def _running(pod: dict[str, Any], i: int) -> dict[str, Any]:
    status = dict(pod.get("status") or {})
    conds = [c for c in status.get("conditions") or [] if c.get("type") != "Ready"]
    for t in ("Initialized", "ContainersReady", "Ready"):
        conds.append({"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": NOW})
    status.update(running_status(i, conds))
    return {**pod, "status": status}


class _Timer:
    """CPU time of one kind's loop, under cProfile when that kind is the one to profile."""

    def __init__(self, kind: str, profile: str | None) -> None:
        self.kind = kind
        self.prof = cProfile.Profile() if kind == profile else None

    def __enter__(self) -> _Timer:
        if self.prof is not None:
            self.prof.enable()
        self.t = time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cpu = time.process_time() - self.t
        if self.prof is not None:
            self.prof.disable()
            pstats.Stats(self.prof, stream=sys.stderr).sort_stats(
                os.environ.get("UPD_SORT", "cumulative")
            ).print_stats(int(os.environ.get("UPD_N", "45")))


async def _share(c: Any, *gvrs: Any) -> None:
    """Read every object as the plane's informers do (``read_only``: the stored dicts, shared
    and compacted), so each write finds its object in the state it has in a running plane."""
    for gvr in gvrs:
        await c.list(gvr, NS, read_only=True)


def _agent_options(update_status: Any) -> dict[str, bool]:
    """The options the node agent passes on its pod status write, where the client has them."""
    import inspect

    params = inspect.signature(update_status).parameters
    return {"handoff": True, "read_only": True} if "handoff" in params else {}


async def _measure(writes: int, profile: str | None = None) -> dict[str, float]:
    from apiserver.client.interface import LEASES, NODES, PODGROUPS, PODS, STATEFULSETS
    from bench.workloads.common import node
    from gangplane.controlplane import ControlPlane, tune_gc

    plane = ControlPlane()
    try:
        c = plane.client("bench")
        await c.create(NODES, node(0))
        # each kind shared once created, as the plane's informers share every revision at
        # once: the store keeps a written dict only some writes (RELEASE_LAG) unless shared
        sets = [await c.create(STATEFULSETS, _statefulset(i), NS) for i in range(writes)]
        await _share(c, STATEFULSETS)
        groups = [
            # owned by the set's Workload (not stored here: its uid is the set's, mirrored)
            await c.create(PODGROUPS, _pod_group(i, s["metadata"]["uid"][::-1]), NS)
            for i, s in enumerate(sets)
        ]
        await _share(c, PODGROUPS)
        pods = [await c.create(PODS, _pod(i, s["metadata"]["uid"]), NS) for i, s in enumerate(sets)]
        sts_bodies = [
            {**{k: v for k, v in s.items() if k != "status"}, "status": _sts_status(s)} for s in sets
        ]
        pg_patches = [
            {
                "metadata": {"resourceVersion": g["metadata"]["resourceVersion"]},
                "status": {
                    "conditions": [
                        {
                            "type": "PodGroupScheduled",
                            "status": "True",
                            "reason": "Scheduled",
                            "message": "",
                            "observedGeneration": 1,
                            "lastTransitionTime": NOW,
                        }
                    ]
                },
            }
            for g in groups
        ]
        bindings = [
            {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": p["metadata"]["name"], "uid": p["metadata"]["uid"]},
                "target": {"kind": "Node", "name": "node-00000"},
            }
            for p in pods
        ]
        out: dict[str, float] = {}
        await _share(c, STATEFULSETS, PODGROUPS, PODS)
        gc.collect()
        tune_gc()  # the collector as the plane (and the bench runner) runs it

        with _Timer("sts-status", profile) as t:
            for b in sts_bodies:
                await c.update_status(STATEFULSETS, b, NS)
        out["sts-status"] = t.cpu / writes * 1e6

        with _Timer("pg-condition", profile) as t:
            for g, p in zip(groups, pg_patches, strict=True):
                await c.patch(
                    PODGROUPS,
                    g["metadata"]["name"],
                    p,
                    NS,
                    patch_type="application/merge-patch+json",
                    subresource="status",
                )
        out["pg-condition"] = t.cpu / writes * 1e6

        with _Timer("binding", profile) as t:
            for p, b in zip(pods, bindings, strict=True):
                await c.create_subresource(PODS, p["metadata"]["name"], "binding", b, NS)
        out["binding"] = t.cpu / writes * 1e6

        bound = [await c.get(PODS, p["metadata"]["name"], NS) for p in pods]
        await _share(c, PODS)
        bodies = [_running(p, i) for i, p in enumerate(bound)]
        gc.collect()
        tune_gc()
        with _Timer("pod-status", profile) as t:
            for b in bodies:
                await c.update_status(PODS, b, NS)
        out["pod-status"] = t.cpu / writes * 1e6

        node_uid = (await c.get(NODES, "node-00000"))["metadata"]["uid"]
        leases = [await c.create(LEASES, _lease(i, node_uid), "kube-node-lease") for i in range(writes)]
        gc.collect()
        tune_gc()
        with _Timer("lease-renew", profile) as t:
            for second in (1, 2):
                leases = [await c.update(LEASES, _renewed(x, second), "kube-node-lease") for x in leases]
        out["lease-renew"] = t.cpu / (2 * writes) * 1e6

        # as the node agent writes them (this tree's agent and client options)
        from controllers.nodeagent.agent import status_write_body

        agent_opts = _agent_options(c.update_status)
        more = [await c.create(PODS, _pod(writes + i, s["metadata"]["uid"]), NS) for i, s in enumerate(sets)]
        for p in more:
            b = {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": p["metadata"]["name"], "uid": p["metadata"]["uid"]},
                "target": {"kind": "Node", "name": "node-00000"},
            }
            await c.create_subresource(PODS, p["metadata"]["name"], "binding", b, NS)
        names = {p["metadata"]["name"] for p in more}
        shared = [
            p for p in (await c.list(PODS, NS, read_only=True))["items"] if p["metadata"]["name"] in names
        ]
        # IPs of their own (not the pod-status kind's): a real agent's pods each have a new IP,
        # so each write's status entry is a field set the server has not encoded yet
        statuses = [_running(p, writes + i)["status"] for i, p in enumerate(shared)]
        gc.collect()
        tune_gc()
        with _Timer("agent-pod-status", profile) as t:
            for p, st in zip(shared, statuses, strict=True):
                await c.update_status(PODS, status_write_body(p, st), NS, **agent_opts)
        out["agent-pod-status"] = t.cpu / writes * 1e6

        lease_opts = {"read_only": True} if agent_opts else {}
        leases = [
            await c.create(LEASES, _lease(writes + i, node_uid), "kube-node-lease") for i in range(writes)
        ]
        gc.collect()
        tune_gc()
        with _Timer("agent-lease-renew", profile) as t:
            for second in (1, 2):
                leases = [
                    await c.update(LEASES, _renewed(x, second), "kube-node-lease", **lease_opts)
                    for x in leases
                ]
        out["agent-lease-renew"] = t.cpu / (2 * writes) * 1e6
        return out
    finally:
        await plane.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writes", type=int, default=600)
    ap.add_argument("--json", action="store_true", help="print one JSON line (for --pairs)")
    ap.add_argument("--pairs", nargs=2, metavar=("BASE", "NEW"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", choices=KINDS, help="cProfile one kind's loop (to stderr)")
    args = ap.parse_args()
    if args.pairs:
        from bench.micro.alternating import alternate  # the parent only: this tree's helper

        alternate(os.path.abspath(__file__), args.pairs[0], args.pairs[1], args.rounds, args.writes, KINDS)
        return
    out = asyncio.run(_measure(args.writes, args.profile))
    if args.json:
        print(json.dumps(out))
    else:
        for kind in KINDS:
            print(f"{kind:<14}{out[kind]:>10.1f} µs")


if __name__ == "__main__":
    main()
