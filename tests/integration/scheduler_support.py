"""Shared pieces of the scheduler integration tests: pods, nodes, components, watch-based waits."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from apiserver.api.types import Obj
from apiserver.client.interface import EVENTS, NODES, PODS, PRIORITYCLASSES, Client
from apiserver.meta import key_of
from controllers.fleet import Fleet
from controllers.nodeagent import node_agent_factory
from controllers.nodeagent.pod_annotations import SIMULATED_LABEL
from gangplane.controlplane import ControlPlane
from scheduler.component import register_scheduler
from scheduler.defaults import default_profile
from scheduler.framework import PluginSpec
from scheduler.scheduler import Scheduler
from tests.helpers import wait_for_list, wait_for_object

#: Simulated durations are multiplied by this: a 30 s grace period takes 0.3 s.
TIME_SCALE = 0.01


def pod(
    name: str,
    *,
    cpu: str = "100m",
    memory: str = "",
    namespace: str = "default",
    priority_class: str = "",
    scheduler_name: str = "",
    grace: int | None = None,
    labels: dict[str, str] | None = None,
    extra_spec: Obj | None = None,
) -> Obj:
    requests = {"cpu": cpu}
    if memory:
        requests["memory"] = memory
    spec: Obj = {
        "containers": [
            {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": requests}}
        ]
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    if scheduler_name:
        spec["schedulerName"] = scheduler_name
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    spec.update(extra_spec or {})
    meta: Obj = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def node(name: str, cpu: str = "4", memory: str = "16Gi", *, simulated: bool = True, **labels: str) -> Obj:
    """A Node with capacity; ``simulated=False`` keeps the node agent away (the test plays kubelet)."""
    lab = {"kubernetes.io/hostname": name, **labels}
    if not simulated:
        lab[SIMULATED_LABEL] = "false"
    alloc = {"cpu": cpu, "memory": memory, "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": lab},
        "spec": {},
        "status": {"capacity": dict(alloc), "allocatable": dict(alloc)},
    }


def priority_class(name: str, value: int, preemption_policy: str = "") -> Obj:
    pc: Obj = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }
    if preemption_policy:
        pc["preemptionPolicy"] = preemption_policy
    return pc


async def create_priority_classes(client: Client) -> None:
    await client.create(PRIORITYCLASSES, priority_class("low", 10))
    await client.create(PRIORITYCLASSES, priority_class("high", 1000))
    await client.create(PRIORITYCLASSES, priority_class("high-never", 1000, "Never"))


async def start_scheduler(cp: ControlPlane) -> Scheduler:
    register_scheduler(cp)
    comp = await cp.start_component("scheduler")
    assert isinstance(comp, Scheduler)
    return comp


async def start_scheduler_with_plugin(cp: ControlPlane, plugin: Any, replaces: str = "") -> Scheduler:
    """A scheduler whose default profile also runs the test's out-of-tree ``plugin`` (a class with
    ``name``), in place of the in-tree plugin ``replaces`` when one is named; started."""
    profile = default_profile()
    if replaces:
        profile.plugins = [p for p in profile.plugins if p.name != replaces]
    profile.plugins.append(PluginSpec(plugin.name))
    sched = Scheduler(
        cp.client("kube-scheduler"),
        cp.gates_for("scheduler"),
        cp.clock,
        cp.metrics_registry,
        [profile],
        registry={plugin.name: plugin},
    )
    await sched.start()
    return sched


async def start_node_agent(cp: ControlPlane, fleet: Any = None) -> bool:
    """Start the node agent (``fleet`` None: no fleet nodes); True once it runs."""
    cp.register(
        "node-agent", node_agent_factory(fleet if fleet is not None else Fleet.empty(), time_scale=TIME_SCALE)
    )
    await cp.start_component("node-agent")
    return True


async def create_nodes(client: Client, nodes: list[Obj]) -> None:
    for n in nodes:
        await client.create(NODES, n)


def node_name(p: Obj | None) -> str:
    return ((p or {}).get("spec") or {}).get("nodeName") or ""


def condition(p: Obj | None, ctype: str) -> Obj | None:
    for c in ((p or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


async def wait_pod(
    client: Client, name: str, cond: Callable[[Obj | None], bool], ns: str = "default", timeout: float = 10
) -> Obj | None:
    return await wait_for_object(client, PODS, name, ns, cond, timeout)


async def wait_bound(client: Client, name: str, ns: str = "default", timeout: float = 10) -> Obj:
    p = await wait_pod(client, name, lambda o: bool(node_name(o)), ns, timeout)
    assert p is not None
    return p


async def wait_unschedulable(client: Client, name: str, ns: str = "default", timeout: float = 10) -> Obj:
    """Until the pod carries ``PodScheduled=False`` (reason Unschedulable)."""

    def ok(o: Obj | None) -> bool:
        c = condition(o, "PodScheduled")
        return c is not None and c.get("status") == "False" and c.get("reason") == "Unschedulable"

    p = await wait_pod(client, name, ok, ns, timeout)
    assert p is not None
    return p


async def wait_all_bound(client: Client, count: int, ns: str = "default", timeout: float = 30) -> list[Obj]:
    return await wait_for_list(
        client, PODS, ns, lambda items: sum(1 for p in items if node_name(p)) >= count, timeout
    )


async def events_for(client: Client, name: str, ns: str = "default") -> list[Obj]:
    lst = await client.list(EVENTS, ns, field_selector=f"involvedObject.name={name}")
    return sorted(lst["items"], key=lambda e: e.get("firstTimestamp") or "")


async def wait_event(client: Client, name: str, reason: str, ns: str = "default", timeout: float = 10) -> Obj:
    """Until an Event of ``reason`` about ``name`` exists; returns it."""
    items = await wait_for_list(
        client,
        EVENTS,
        ns,
        lambda evs: any(e.get("reason") == reason and e["involvedObject"].get("name") == name for e in evs),
        timeout,
    )
    return next(e for e in items if e.get("reason") == reason and e["involvedObject"].get("name") == name)


async def informer_has(informer: Any, key: str, timeout: float = 10) -> Obj:
    """Until ``informer`` (a component's cache) holds ``key`` (``ns/name``); returns the object."""
    seen = asyncio.Event()

    def on_add(obj: Obj) -> None:
        if key_of(obj) == key:
            seen.set()

    informer.add_event_handler(on_add, lambda old, new: on_add(new))
    await asyncio.wait_for(seen.wait(), timeout)
    return informer.get(key)


class PodHistory:
    """Every version of one pod from now on (the watch starts from a list, so nothing is missed)."""

    def __init__(self, client: Client, name: str, ns: str = "default") -> None:
        self.client = client
        self.name = name
        self.ns = ns
        self.versions: list[Obj] = []
        self.deleted = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> PodHistory:
        lst = await self.client.list(PODS, self.ns, field_selector=f"metadata.name={self.name}")
        self.versions.extend(lst["items"])
        rv = lst["metadata"]["resourceVersion"]
        self._task = asyncio.create_task(self._run(rv))
        return self

    async def _run(self, rv: str) -> None:
        async for ev in self.client.watch(
            PODS, self.ns, field_selector=f"metadata.name={self.name}", resource_version=rv
        ):
            if ev.type == "BOOKMARK":
                continue
            if ev.type == "DELETED":
                self.deleted.set()
                return
            self.versions.append(ev.object)

    async def wait_deleted(self, timeout: float = 10) -> None:
        await asyncio.wait_for(self.deleted.wait(), timeout)

    async def close(self) -> None:
        # Python 3.11's wait_for (inside the watch) can swallow a cancel that races with an
        # event, so cancel until the task really ends.
        while self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=0.1)
