"""The controller manager: ``--controllers`` selection, registration, resource lists."""

from __future__ import annotations

import pytest

from apiserver.client.interface import EVENTS, PODS, WORKLOADS
from controllers.manager import (
    GARBAGE_COLLECTOR,
    NAMESPACE,
    NODE_AGENT,
    PODGROUP_PROTECTION,
    PV_BINDER,
    STATEFULSET,
    ControllerSpec,
    gc_resources,
    known_controllers,
    namespaced_resources,
    register_controllers,
    select_controllers,
)
from featuregates import GENERIC_WORKLOAD, FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions, default_components

pytestmark = pytest.mark.anyio

SPECS = [
    ControllerSpec("a-controller", lambda cp: None, ("a",)),  # type: ignore[arg-type,return-value]
    ControllerSpec("b-controller", lambda cp: None, ("b",)),  # type: ignore[arg-type,return-value]
    ControllerSpec("off-by-default", lambda cp: None, (), enabled_by_default=False),  # type: ignore[arg-type,return-value]
]


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        ("*", ["a-controller", "b-controller"]),
        ("", []),
        ("*,-a", ["b-controller"]),
        ("*,-a-controller", ["b-controller"]),
        ("b", ["b-controller"]),
        ("*,off-by-default", ["a-controller", "b-controller", "off-by-default"]),
        ("-b,*", ["a-controller"]),
        (" a , b ", ["a-controller", "b-controller"]),
    ],
)
def test_select_controllers_follows_kube_syntax(flag: str, expected: list[str]) -> None:
    assert select_controllers(flag, SPECS) == expected


@pytest.mark.parametrize("flag", ["nope", "*,-nope", "a,statefulset-thing"])
def test_unknown_controller_names_are_rejected(flag: str) -> None:
    with pytest.raises(
        ValueError, match=r"is not in the list of known controllers \(known: a-controller, b-controller"
    ):
        select_controllers(flag, SPECS)


async def test_register_controllers_registers_everything_and_returns_the_selection(cp: ControlPlane) -> None:
    names = register_controllers(cp, "*,-namespace")
    known = [s.name for s in known_controllers()]
    served = {(r.group, r.version, r.plural) for r in cp.api.registry.all()}
    startable = [
        s.name
        for s in known_controllers()
        if s.requires is None or (s.requires.group, s.requires.version, s.requires.resource) in served
    ]
    assert NAMESPACE not in names
    assert [n for n in startable if n != NAMESPACE] == names
    assert set(known) >= {GARBAGE_COLLECTOR, NAMESPACE, STATEFULSET, PV_BINDER}
    assert set(known) <= set(cp._factories)


async def test_node_agent_is_registered_when_installed(cp: ControlPlane) -> None:
    assert NODE_AGENT in register_controllers(cp, "*")
    assert register_controllers(cp, "*,-nodeagent").count(NODE_AGENT) == 0


async def test_default_components_propagates_the_unknown_name_error(cp: ControlPlane) -> None:
    with pytest.raises(ValueError, match='"bogus" is not in the list of known controllers'):
        default_components(cp, None, "*,bogus")


async def test_gc_watches_every_served_resource_but_events(cp: ControlPlane) -> None:
    gvrs = {r.gvr for r in gc_resources(cp.context_for(GARBAGE_COLLECTOR))}
    assert PODS in gvrs
    assert WORKLOADS in gvrs
    assert EVENTS not in gvrs
    assert not any(g.group == "events.k8s.io" for g in gvrs)
    assert all(r.namespaced for r in namespaced_resources(cp.context_for(NAMESPACE)))
    assert EVENTS in {r.gvr for r in namespaced_resources(cp.context_for(NAMESPACE))}


def test_gated_off_resources_are_not_watched() -> None:
    off = ControlPlane(ControlPlaneOptions(gates=FeatureGate().with_overrides({GENERIC_WORKLOAD: False})))
    assert WORKLOADS not in {r.gvr for r in gc_resources(off.context_for(GARBAGE_COLLECTOR))}
    per_component = ControlPlane(
        ControlPlaneOptions(component_gates={GARBAGE_COLLECTOR: {GENERIC_WORKLOAD: False}})
    )
    assert WORKLOADS not in {r.gvr for r in gc_resources(per_component.context_for(GARBAGE_COLLECTOR))}
    assert WORKLOADS in {r.gvr for r in namespaced_resources(per_component.context_for(NAMESPACE))}


def test_controllers_needing_an_unserved_resource_are_not_started() -> None:
    on = ControlPlane()
    assert PODGROUP_PROTECTION in register_controllers(on, "*")
    off = ControlPlane(ControlPlaneOptions(gates=FeatureGate().with_overrides({GENERIC_WORKLOAD: False})))
    assert PODGROUP_PROTECTION not in register_controllers(off, "*")
    assert PODGROUP_PROTECTION not in register_controllers(off, "*,podgroup-protection")


async def test_components_stop_and_start_individually(cp: ControlPlane) -> None:
    register_controllers(cp, "*")
    for name in (GARBAGE_COLLECTOR, NAMESPACE, PV_BINDER, STATEFULSET):
        await cp.start_component(name)
    await cp.stop_component(STATEFULSET)
    assert set(cp.components) == {GARBAGE_COLLECTOR, NAMESPACE, PV_BINDER}
    again = await cp.start_component(STATEFULSET)
    assert cp.components[STATEFULSET] is again
