"""kube-controller-manager's shared informers in the full control plane (``gangplane serve``'s set of
controllers): one watch per (resource, namespace, selectors) for all of them, each controller with
handlers of its own; a controller stopped and started mid-workflow (``stop_component`` /
``start_component``, as the UI and CLI do) leaves the watches serving the others and resumes from
the shared cache."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import PODS, REPLICASETS, STATEFULSETS
from apiserver.client.sharedinformers import InformerView, SharedInformerFactory
from controllers.manager import STATEFULSET
from featuregates.scopes import CONTROLLER_MANAGER
from gangplane.controlplane import ControlPlane, ControlPlaneOptions, default_components
from scheduler.component import COMPONENT_NAME as SCHEDULER
from tests.helpers import wait_for_list

pytestmark = pytest.mark.anyio
NS = "default"


def _template(app: str) -> Obj:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
    }


def replicaset(name: str, replicas: int) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": _template(name),
        },
    }


def statefulset(name: str, replicas: int) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "template": _template(name),
        },
    }


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    """Every controller of kube-controller-manager, without the node agent and the scheduler (binaries
    of their own, with informers of their own) so that every watch of the plane is a controller's."""
    cp = ControlPlane(ControlPlaneOptions(bookmark_interval=0.5, client_bookmark_interval=0.2))
    names = [n for n in default_components(cp, controllers="*,-nodeagent") if n != SCHEDULER]
    await cp.start(names)
    try:
        yield cp
    finally:
        await cp.stop()


def shared_of(cp: ControlPlane) -> SharedInformerFactory:
    return cp.shared_informers[CONTROLLER_MANAGER]


def pod_informers(cp: ControlPlane) -> dict[str, Any]:
    return {inf.field_selector: inf for inf in shared_of(cp).informers() if inf.gvr == PODS}


async def test_controllers_share_one_watch_per_resource(plane: ControlPlane) -> None:
    shared = shared_of(plane)
    # every watch the controllers hold is one shared informer: none is opened twice
    assert plane.api.store.watcher_count() == len(shared.informers())
    keys = [(i.gvr, i.namespace, i.label_selector, i.field_selector) for i in shared.informers()]
    assert len(keys) == len(set(keys))
    # one pod watch for the dozen controllers that follow pods, one for those that want bound pods
    assert sorted(pod_informers(plane)) == ["", "spec.nodeName!="]
    assert pod_informers(plane)[""].handler_count() >= 10
    for name, comp in plane.components.items():
        for inf in comp.informers.informers():  # type: ignore[attr-defined]
            assert isinstance(inf, InformerView), name
            assert inf.shared in shared.informers(), name


async def test_restarting_one_controller_keeps_the_others_working(plane: ControlPlane) -> None:
    client = plane.client("test")
    pods = pod_informers(plane)[""]
    watches = plane.api.store.watcher_count()
    handlers = pods.handler_count()
    own = plane.components[STATEFULSET].pods.handler_count()  # type: ignore[attr-defined]
    assert own > 0

    await plane.stop_component(STATEFULSET)
    assert pods.handler_count() == handlers - own
    assert plane.api.store.watcher_count() == watches
    await client.create(STATEFULSETS, statefulset("db", 2), NS)
    # the ReplicaSet controller still gets pod and set events from the shared informers
    await client.create(REPLICASETS, replicaset("web", 2), NS)
    await wait_for_list(client, PODS, NS, lambda items: len(items) == 2, label_selector="app=web")
    assert not (await client.list(PODS, NS, label_selector="app=db"))["items"]

    await plane.start_component(STATEFULSET)
    # the restarted controller is handed the shared cache, set created while it was down included
    await wait_for_list(client, PODS, NS, lambda items: len(items) == 2, label_selector="app=db")
    assert pod_informers(plane)[""] is pods and pods.handler_count() == handlers
    assert plane.api.store.watcher_count() == watches

    await plane.stop_components()
    assert shared_of(plane).informers() == []
    assert plane.api.store.watcher_count() == 0
