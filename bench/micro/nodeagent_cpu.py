"""The node agent's CPU per pod and per Lease renewal (a script, not a test):

    python -m bench.micro.nodeagent_cpu [--nodes 1000] [--pods 1000] [--rounds 3]
    python -m bench.micro.nodeagent_cpu --stub-writes   # the agent's side of a pod alone
    python -m bench.micro.nodeagent_cpu --own           # its own code alone, no event loop work
    python -m bench.micro.nodeagent_cpu --leases 8      # per Lease renewal, all in

Default: a plane with only the API server and the node agent (the fleet registered, every node
Ready before the clock starts). The pods of one gang StatefulSet template are created unbound (the
agent watches bound pods only), then the clock runs while each is bound through
``pods/binding``, as the scheduler binds, until every pod is Running and Ready and the agent's
Events are written. The same binding phase is then timed with the agent stopped, so
``agent_ms_per_pod`` is what the agent adds per pod: its syncs, its status write and its three
Events (server and client side), its informers' handling of both updates (and the share of the
waiting watch). Lease renewals stay out of the phase (kubelet's 10 s period, which the phase is
shorter than).

``--stub-writes`` answers the agent's pod status writes without the server and drops its Events:
what is left is the agent's code plus its informer, work queue and event loop per pod.
``--own`` runs the agent's pod sync (``_sync_pod``) and Lease sync (``_sync_lease``) directly on
an agent that is not started, its writes answered locally, a pod or a renewal after another:
the agent's own code alone, the steadiest of the four. ``--leases`` times an idle fleet renewing
every second (serve's period) with the garbage collector watching, as in the gang scenarios.

Prints process CPU (``time.process_time``); compare builds by alternating them
(``PYTHONPATH=<tree> python <this file>``, which also runs against a tree without it).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import time
from typing import Any

from apiserver.client.interface import NAMESPACES, NODES, PODS
from bench.workloads.statefulsets import fleet_doc
from controllers.nodeagent import NodeAgent
from gangplane.controlplane import GC_THRESHOLD  # the plane's own collector thresholds


def gang_pod(i: int) -> dict[str, Any]:
    """A pod as the StatefulSet controller makes one of a 1,000-replica gang set (one container)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"gang-{i}", "labels": {"app": "gang", "apps.kubernetes.io/pod-index": str(i)}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m"}},
                }
            ],
            "hostname": f"gang-{i}",
            "subdomain": "gang",
        },
    }


async def _running(client: Any, ns: str, n: int, rv: str) -> None:
    seen: set[str] = set()
    async for ev in client.watch(PODS, ns, resource_version=rv, read_only=True):
        obj = ev.object or {}
        conds = (obj.get("status") or {}).get("conditions") or []
        if any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds):
            seen.add(obj["metadata"]["name"])
            if len(seen) >= n:
                return


class _NoEvents:
    """A recorder that drops what it is given (``--stub-writes``)."""

    def event_ref(self, *_a: Any, **_k: Any) -> None:
        return None


def _stub_writes(agent: Any) -> None:
    """The agent's own side alone: its pod status writes answered without the server (the body
    back with the next resourceVersion) and its Events dropped; Lease and Node writes are real."""

    async def update_status(_gvr: Any, obj: dict[str, Any], _ns: str = "", **_k: Any) -> dict[str, Any]:
        md = dict(obj.get("metadata") or {})
        md["resourceVersion"] = str(int(md.get("resourceVersion") or 0) + 1)
        return {**obj, "metadata": md}

    agent.client.update_status = update_status
    agent._recorder = lambda _node: _NoEvents()


async def one_round(nodes: int, pods: int, agent_on: bool, profile: str = "", stub: bool = False) -> float:
    from controllers.fleet import parse_fleet
    from controllers.nodeagent import SERVE_TIME_SCALE, node_agent_factory
    from gangplane.controlplane import ControlPlane, default_components

    cp = ControlPlane()
    fleet = parse_fleet(fleet_doc(nodes, 10))
    default_components(cp, fleet, "*")
    # serve's time scale with kubelet's own Lease period (10 s): no renewal inside the phase
    cp.register("node-agent", node_agent_factory(fleet, time_scale=SERVE_TIME_SCALE))
    client = cp.client("bench")
    agent = await cp.start_component("node-agent")
    assert isinstance(agent, NodeAgent)
    names: list[str] = []
    while len(names) < nodes:
        lst = await client.list(NODES)
        names = [n["metadata"]["name"] for n in lst["items"] if not (n.get("spec") or {}).get("taints")]
        await asyncio.sleep(0.05)
    await agent.wait_idle(60)
    if not agent_on:
        await cp.stop_component("node-agent")
    elif stub:
        _stub_writes(agent)
    await client.create(NAMESPACES, {"metadata": {"name": "bench"}})
    for i in range(pods):
        await client.create(PODS, gang_pod(i), "bench")
    rv = (await client.list(PODS, "bench"))["metadata"]["resourceVersion"]
    gc.collect()
    waiter = asyncio.create_task(_running(client, "bench", pods, rv)) if agent_on and not stub else None
    await asyncio.sleep(0)
    prof = cProfile.Profile() if profile else None
    t = time.process_time()
    if prof is not None:
        prof.enable()
    for i in range(pods):
        node = names[i % len(names)]
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": f"gang-{i}", "namespace": "bench"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        await client.create_subresource(PODS, f"gang-{i}", "binding", binding, "bench")
    if waiter is not None:
        await asyncio.wait_for(waiter, 300)
        await agent.flush_events()
    elif stub:
        while agent.stats["pod_status_writes"] < pods:
            await asyncio.sleep(0.001)
    if prof is not None:
        prof.disable()
        prof.dump_stats(profile)
    cpu = time.process_time() - t
    await cp.stop()
    return cpu


async def lease_round(nodes: int, seconds: float) -> tuple[float, int]:
    """(CPU seconds, Lease renewals) of ``seconds`` of an idle fleet at serve's Lease period (1 s),
    with the garbage collector watching, as in the gang scenarios' plane."""
    from apiserver.client.interface import LEASES
    from controllers.fleet import parse_fleet
    from gangplane.controlplane import ControlPlane, default_components

    cp = ControlPlane()
    default_components(cp, parse_fleet(fleet_doc(nodes, 10)), "*")
    client = cp.client("bench")
    agent = await cp.start_component("node-agent")
    assert isinstance(agent, NodeAgent)
    await cp.start_component("garbage-collector-controller")
    while True:
        lst = await client.list(NODES)
        if sum(1 for n in lst["items"] if not (n.get("spec") or {}).get("taints")) >= nodes:
            break
        await asyncio.sleep(0.05)
    await agent.wait_idle(60)
    await asyncio.sleep(1.5)
    # an idle plane writes nothing but the renewals: the store's resourceVersion counts them
    rv0 = int((await client.list(LEASES, "kube-node-lease"))["metadata"]["resourceVersion"])
    gc.collect()
    t = time.process_time()
    await asyncio.sleep(seconds)
    cpu = time.process_time() - t
    rv1 = int((await client.list(LEASES, "kube-node-lease"))["metadata"]["resourceVersion"])
    await cp.stop()
    return cpu, rv1 - rv0


class _LocalWrites:
    """A client that answers writes with the body and the next resourceVersion (``--own``)."""

    async def update_status(self, _gvr: Any, obj: dict[str, Any], _ns: str = "", **_k: Any) -> dict[str, Any]:
        return _next_version(obj)

    async def update(self, _gvr: Any, obj: dict[str, Any], _ns: str = "", **_k: Any) -> dict[str, Any]:
        return _next_version(obj)

    async def create(self, _gvr: Any, obj: dict[str, Any], _ns: str = "", **_k: Any) -> dict[str, Any]:
        return _next_version(obj)


def _next_version(obj: dict[str, Any]) -> dict[str, Any]:
    md = dict(obj.get("metadata") or {})
    md["resourceVersion"] = str(int(md.get("resourceVersion") or 0) + 1)
    return {**obj, "metadata": md}


def _own_node(i: int) -> dict[str, Any]:
    cap = {"cpu": "32", "memory": "128Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"n{i}", "uid": f"node-uid-{i}", "resourceVersion": "5"},
        "spec": {"podCIDR": f"10.{128 + i // 256}.{i % 256}.0/24"},
        "status": {"capacity": cap, "allocatable": cap},
    }


def _own_pod(i: int, nodes: int) -> dict[str, Any]:
    """``gang_pod(i)`` as the agent's informer sees it once bound: uid, version, PodScheduled."""
    pod = gang_pod(i)
    pod["metadata"].update(namespace="bench", uid=f"pod-uid-{i}", resourceVersion=str(100 + i), generation=1)
    pod["spec"]["nodeName"] = f"n{i % nodes}"
    scheduled = {
        "type": "PodScheduled",
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    pod["status"] = {"phase": "Pending", "qosClass": "Burstable", "conditions": [scheduled]}
    return pod


async def own_round(nodes: int, pods: int, renewals: int = 3) -> tuple[float, float]:
    """(µs per pod of ``_sync_pod`` bound → Running, µs per renewal of ``_sync_lease``) on an agent
    that is not started: its informers filled by hand, its writes answered by :class:`_LocalWrites`,
    its Events dropped."""
    from apiserver.meta import FakeClock, key_of
    from controllers.fleet import Fleet

    clock = FakeClock()
    agent = NodeAgent(_LocalWrites(), Fleet.empty(), time_scale=0.1, lease_renew_interval=1.0, clock=clock)  # type: ignore[arg-type]
    agent.setup()
    agent._recorder = lambda _node: _NoEvents()  # type: ignore[assignment,method-assign,return-value]
    names = []
    for i in range(nodes):
        node = _own_node(i)
        agent.node_informer._upsert(node)
        agent._node_state(node)
        names.append(node["metadata"]["name"])
    objs = [_own_pod(i, nodes) for i in range(pods)]
    gc.collect()
    t = time.process_time()
    for pod in objs:
        agent.pod_informer._upsert(pod)
        await agent._sync_pod(key_of(pod))
    per_pod = (time.process_time() - t) / pods * 1e6
    assert agent.stats["pod_status_writes"] == pods, agent.stats
    for name in names:  # the first renewal creates the Lease
        await agent._sync_lease(name)
    t = time.process_time()
    for _ in range(renewals):
        clock.step(1.0)
        for name in names:
            await agent._sync_lease(name)
    per_renewal = (time.process_time() - t) / (renewals * nodes) * 1e6
    return per_pod, per_renewal


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--stub-writes",
        action="store_true",
        help="answer the agent's pod status writes without the server and drop its Events: its own side alone",
    )
    ap.add_argument(
        "--own", action="store_true", help="instead: the agent's own code per pod and per renewal"
    )
    ap.add_argument(
        "--leases",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="instead: CPU per Lease renewal of an idle fleet renewing every second, over SECONDS",
    )
    ap.add_argument(
        "--agent-only", action="store_true", help="skip the rounds without the agent (for sampling profilers)"
    )
    ap.add_argument("--profile", default="", help="cProfile one agent round's phase into this file, and stop")
    args = ap.parse_args()
    gc.set_threshold(*GC_THRESHOLD)
    if args.own:
        runs = [asyncio.run(own_round(args.nodes, args.pods)) for _ in range(args.rounds)]
        print(
            f"own code: {' '.join(f'{p:.1f}' for p, _ in runs)} µs per pod; "
            f"{' '.join(f'{r:.1f}' for _, r in runs)} µs per Lease renewal; "
            f"best {min(p for p, _ in runs):.1f} / {min(r for _, r in runs):.1f}"
        )
        return
    if args.leases:
        for _ in range(args.rounds):
            cpu, n = asyncio.run(lease_round(args.nodes, args.leases))
            print(
                f"leases: {n} renewals in {args.leases:.0f} s, {cpu / max(n, 1) * 1e6:.0f} µs CPU per renewal"
            )
        return
    if args.profile:
        asyncio.run(one_round(args.nodes, args.pods, True, args.profile))
        return
    with_agent: list[float] = []
    without: list[float] = []
    for _ in range(args.rounds):
        with_agent.append(
            asyncio.run(one_round(args.nodes, args.pods, True, stub=args.stub_writes)) / args.pods * 1000
        )
        if not args.agent_only:
            without.append(asyncio.run(one_round(args.nodes, args.pods, False)) / args.pods * 1000)
    if not without:
        print(f"bound→Running: {' '.join(f'{x:.3f}' for x in with_agent)} ms/pod")
        return
    med = min(with_agent) - min(without)
    print(
        f"bound→Running: {' '.join(f'{x:.3f}' for x in with_agent)} ms/pod; bindings alone "
        f"{' '.join(f'{x:.3f}' for x in without)} ms/pod; agent_ms_per_pod {med:.3f} (best of each)"
    )


if __name__ == "__main__":
    main()
