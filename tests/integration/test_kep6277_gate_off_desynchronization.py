"""KEP-6277 "Feature Enablement and Rollback": "Gate toggled off: Workload template and PodGroup
minCount are no longer updated on scale, and the pre-existing PodGroup is still honored by the
scheduler (the documented desynchronization behavior)".

The gate is switched off for the whole controller manager (the ``kube-controller-manager`` gate
view that ``--controller-manager-feature-gates`` writes) while the scheduler keeps
``GenericWorkload``: a gang of 3 that does not fit is scaled to 2, minCount stays 3, and the two
remaining pods stay Pending although they would fit - the stale PodGroup is still enforced.
Turning the gate back on re-syncs minCount to 2 and the pods bind.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import PODGROUPS, PODS, STATEFULSETS, WORKLOADS
from controllers.manager import STATEFULSET, register_controllers
from featuregates.scopes import CONTROLLER_MANAGER
from gangplane.controlplane import ControlPlane
from tests.integration.kep6277_support import NS, min_count, wait_min_count, wait_pods, wait_single
from tests.integration.podgroup_support import scheduled_condition, wait_pod_group
from tests.integration.scheduler_support import (
    create_nodes,
    create_priority_classes,
    node,
    node_name,
    pod,
    start_scheduler,
    wait_bound,
)

pytestmark = pytest.mark.anyio
OFF = {"WorkloadWithStatefulSet": False}


def gang_sts(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": NS},
        "spec": {
            "replicas": replicas,
            "serviceName": "db",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "db"}},
            "scheduling": {"schedulingPolicy": {"gang": {}}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {
                    "priorityClassName": "low",
                    "terminationGracePeriodSeconds": 0,
                    "containers": [
                        {
                            "name": "c",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "1"}},
                        }
                    ],
                },
            },
        },
    }


async def restart_controllers(cp: ControlPlane, gates: dict[str, bool] | None) -> None:
    await cp.stop_component(STATEFULSET)
    if gates is None:
        cp.options.component_gates.pop(CONTROLLER_MANAGER, None)
    else:
        cp.options.component_gates[CONTROLLER_MANAGER] = gates
    await cp.start_component(STATEFULSET)


async def test_gate_toggled_off_min_count_stops_following_scale_and_the_pod_group_is_still_enforced(
    cp: ControlPlane, client: Any
) -> None:
    await create_priority_classes(client)  # the gang runs at "low" (10), the canary at 0
    register_controllers(cp, "statefulset")
    await cp.start_component(STATEFULSET)
    await create_nodes(client, [node("n1", "2")])  # room for 2 of the gang's 3
    await start_scheduler(cp)
    await client.create(STATEFULSETS, gang_sts(3))
    await wait_pods(client, "db", 3)
    wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
    held = await wait_pod_group(client, pg["metadata"]["name"], "False")
    assert (
        (scheduled_condition(held) or {})
        .get("message", "")
        .startswith("minCount (3) cannot be satisfied: 2 scheduled, 0 remaining")
    )

    # kube-controller-manager without the gate: scale to 2 leaves both objects at minCount 3
    await restart_controllers(cp, OFF)
    assert not cp.gates_for(STATEFULSET).enabled("WorkloadWithStatefulSet")
    await client.patch(STATEFULSETS, "db", {"spec": {"replicas": 2}}, NS)
    pods = await wait_pods(client, "db", 2)
    assert min_count(await client.get(WORKLOADS, wl["metadata"]["name"], NS)) == 3
    assert min_count(await client.get(PODGROUPS, pg["metadata"]["name"], NS)) == 3
    # a lower-priority canary is queued behind any retry of the gang: once it is bound, the gang's
    # two pods have had their chance, and they still wait (the room is there: the canary got it)
    await client.create(PODS, pod("canary", cpu="100m", grace=0))
    assert node_name(await wait_bound(client, "canary")) == "n1"
    for p in pods:
        assert not node_name(await client.get(PODS, p["metadata"]["name"], NS))

    # gate back on (and the canary's room returned): minCount is re-synced to 2 and the gang binds
    await client.delete(PODS, "canary", NS)
    await restart_controllers(cp, None)
    await wait_min_count(client, PODGROUPS, pg["metadata"]["name"], 2)
    for p in pods:
        assert node_name(await wait_bound(client, p["metadata"]["name"], timeout=15)) == "n1"
