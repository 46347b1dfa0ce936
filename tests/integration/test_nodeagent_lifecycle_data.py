"""Node agent lifecycle as data: user stages that drive the agent beside (or instead of) the shipped
``lifecycle.yaml`` — status templates, events, finalizers, replacing the defaults.

Same harness as ``test_nodeagent_pods``: an in-process plane with only the node agent, pods bound
by ``spec.nodeName``, a FakeClock where timing matters (the test fires due timers itself).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import yaml

from apiserver.client.interface import NODES, PODS
from apiserver.meta import FakeClock
from controllers.nodeagent import READY_AFTER, NodeAgent, node_agent_factory
from controllers.nodeagent.lifecycle import DEFAULTS_FILE
from featuregates import FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.integration.test_nodeagent_pods import (
    FLEET,
    cond_status,
    idle,
    nodes_ready,
    pod,
    ready,
    running,
    step,
    wait_events,
    wait_obj,
    wait_pod,
)

pytestmark = pytest.mark.anyio

QUIET = {"lease_renew_interval": 1e6, "status_report_interval": 1e6}

WARM = {
    "name": "web-warm",
    "resourceRef": {"kind": "Pod"},
    "selector": {
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": ".status.conditions[type=Ready].status", "operator": "In", "values": ["True"]}
        ],
    },
    "delay": "2s",
    "next": {
        "statusTemplate": {
            "conditions": [{"type": "example.com/Warm", "status": "True", "reason": "CacheLoaded"}],
            "message": "warm on $(nodeName) at $(podIP)",
        },
        "event": {"type": "Normal", "reason": "Warmed", "message": "cache of $(name) loaded"},
    },
}


async def _plane(stages: list[Any], clock: FakeClock | None = None) -> tuple[ControlPlane, NodeAgent]:
    plane = ControlPlane(
        ControlPlaneOptions(
            gates=FeatureGate(), clock=clock, bookmark_interval=0.5, client_bookmark_interval=0.2
        )
        if clock is not None
        else ControlPlaneOptions()
    )
    plane.register("node-agent", node_agent_factory(FLEET, time_scale=1.0, stages=stages, **QUIET))
    a = await plane.start_component("node-agent")
    assert isinstance(a, NodeAgent)
    return plane, a


@pytest.fixture
async def warm() -> AsyncIterator[tuple[ControlPlane, FakeClock, NodeAgent]]:
    clock = FakeClock()
    plane, a = await _plane([WARM], clock)
    try:
        await nodes_ready(plane.client("wait"), FLEET.names())
        yield plane, clock, a
    finally:
        await plane.stop()


def labelled(name: str, **kw: Any) -> dict[str, Any]:
    p = pod(name, node="node-0", **kw)
    p["metadata"]["labels"] = {"app": "web"}
    return p


async def test_a_user_status_template_sets_a_custom_condition_after_its_delay(
    warm: tuple[ControlPlane, FakeClock, NodeAgent],
) -> None:
    cp, clock, agent = warm
    client = cp.client("test")
    await client.create(PODS, labelled("w"), "default")
    await wait_pod(client, "w", ready)
    await idle(agent)
    assert cond_status(await client.get(PODS, "w", "default"), "example.com/Warm") == ""
    assert await step(clock, agent, 1.5) == 0
    assert cond_status(await client.get(PODS, "w", "default"), "example.com/Warm") == ""
    assert await step(clock, agent, 0.5) == 1
    p = await wait_pod(client, "w", lambda o: cond_status(o, "example.com/Warm") == "True")
    assert p is not None
    st = p["status"]
    assert st["phase"] == "Running" and ready(p), "the built-in lifecycle's status is kept"
    warm_cond = next(c for c in st["conditions"] if c["type"] == "example.com/Warm")
    assert warm_cond["reason"] == "CacheLoaded" and warm_cond["lastTransitionTime"]
    assert st["message"] == f"warm on node-0 at {st['podIP']}"
    (ev,) = await wait_events(client, "w", "Warmed")
    assert ev["message"] == "cache of w loaded" and ev["source"]["component"] == "kubelet"
    # one-shot: nothing more is scheduled for the pod
    assert agent.timers.due_at(("pod", "default/w")) is None


async def test_a_user_stage_leaves_pods_its_selector_does_not_match(
    warm: tuple[ControlPlane, FakeClock, NodeAgent],
) -> None:
    cp, clock, agent = warm
    client = cp.client("test")
    await client.create(PODS, pod("plain", node="node-0"), "default")
    await wait_pod(client, "plain", ready)
    await step(clock, agent, 5)
    p = await client.get(PODS, "plain", "default")
    assert cond_status(p, "example.com/Warm") == "" and "message" not in p["status"]


async def test_a_user_stage_adds_a_finalizer() -> None:
    stage = {
        "name": "guard",
        "resourceRef": {"kind": "Pod"},
        "selector": {"matchLabels": {"app": "web"}},
        "next": {"finalizers": {"add": ["example.com/guard"]}},
    }
    cp, agent = await _plane([stage])
    try:
        client = cp.client("test")
        await nodes_ready(client, FLEET.names())
        await client.create(PODS, labelled("f"), "default")
        p = await wait_pod(
            client, "f", lambda o: ready(o) and "example.com/guard" in o["metadata"].get("finalizers", [])
        )
        assert p is not None and p["metadata"]["finalizers"] == ["example.com/guard"]
    finally:
        await cp.stop()


def _defaults_without(*names: str) -> list[Any]:
    from importlib import resources

    text = resources.files("controllers.nodeagent").joinpath(DEFAULTS_FILE).read_text()
    return [s for s in yaml.safe_load(text)["stages"] if s["name"] not in names]


async def test_replace_defaults_runs_only_the_users_lifecycle() -> None:
    """The shipped lifecycle without ``pod-ready``, as a replacement: a pod due Ready after 1 s runs
    but nothing is left to make it Ready."""
    cp, agent = await _plane([{"replaceDefaults": True}, *_defaults_without("pod-ready")])
    try:
        client = cp.client("test")
        await nodes_ready(client, FLEET.names())
        assert [s.name for s in agent.lifecycle.pods if s.name == "pod-ready"] == []
        await client.create(PODS, pod("r", node="node-0", annotations={READY_AFTER: "1s"}), "default")
        p = await wait_pod(client, "r", running)
        await idle(agent)
        p = await client.get(PODS, "r", "default")
        assert not ready(p) and cond_status(p, "ContainersReady") == "False"
        assert agent.timers.due_at(("pod", "default/r")) is None, "no stage is left to run"
    finally:
        await cp.stop()


async def test_a_node_stage_can_delete_the_node_it_matches() -> None:
    stage = {
        "name": "retire-node-1",
        "resourceRef": {"kind": "Node"},
        "selector": {
            "matchExpressions": [
                {"key": ".metadata.name", "operator": "In", "values": ["node-1"]},
                {"key": ".status.conditions[type=Ready].status", "operator": "In", "values": ["True"]},
            ]
        },
        "next": {
            "delete": True,
            "event": {"type": "Normal", "reason": "Retired", "message": "$(name) retired"},
        },
    }
    cp, agent = await _plane([stage])
    try:
        client = cp.client("test")
        await nodes_ready(client, ["node-0"])
        assert await wait_obj(client, NODES, "node-1", "", lambda o: o is None) is None
        assert (await client.get(NODES, "node-0"))["metadata"]["name"] == "node-0"
    finally:
        await cp.stop()
